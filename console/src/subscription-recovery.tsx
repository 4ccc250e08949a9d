import { useEffect, useState } from "preact/hooks";
import type {
  RecoverDeliveriesResponse,
  Recovery,
} from "../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import { errorMessage } from "./api.js";
import { useSession } from "./context.js";
import { formatCount, formatTime } from "./format.js";
import { localInputToIso } from "./log-filters.js";

/** How often a running job's progress is read again. */
const progressEveryMs = 2_000;

/**
 * D37 on a subscription: its failed deliveries of a window sent again by one job. The window is previewed
 * first (how many are failed in it), then the job runs; its progress is read while it runs, and it can be
 * cancelled. The newest job, running or ended, is shown when the page opens.
 */
export function RecoverySection({ subscriptionId, active }: { subscriptionId: string; active: boolean }) {
  const { api, workspaceId } = useSession();
  const request = { workspaceId, id: subscriptionId };
  const [recovery, setRecovery] = useState<Recovery>();
  const [preview, setPreview] = useState<{ window: Window; answer: RecoverDeliveriesResponse }>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  // The newest job once, then again while it runs.
  const running = recovery?.status === "running";
  useEffect(() => {
    const controller = new AbortController();
    const read = () =>
      api.deliveries.getRecovery(request, { signal: controller.signal }).then(
        (answer) => answer.recovery && setRecovery(answer.recovery),
        (caught: unknown) => controller.signal.aborted || setError(errorMessage(caught)),
      );
    if (recovery === undefined || running) {
      const timer = recovery === undefined ? setTimeout(read, 0) : setTimeout(read, progressEveryMs);
      return () => {
        clearTimeout(timer);
        controller.abort();
      };
    }
    return () => controller.abort();
  }, [workspaceId, subscriptionId, recovery]);

  async function call<T>(run: () => Promise<T>, then: (answer: T) => void) {
    setBusy(true);
    setError(undefined);
    try {
      then(await run());
    } catch (caught) {
      setError(errorMessage(caught));
    } finally {
      setBusy(false);
    }
  }

  function previewWindow(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const window = {
      since: localInputToIso(String(form.get("since") ?? "")) ?? "",
      until: localInputToIso(String(form.get("until") ?? "")),
    };
    void call(
      () => api.deliveries.recoverDeliveries({ ...request, ...window, preview: true }),
      (answer) => setPreview({ window, answer }),
    );
  }

  return (
    <section aria-labelledby="recovery-title">
      <h2 id="recovery-title">Recover failed deliveries</h2>
      {recovery && (
        <RecoveryProgress
          recovery={recovery}
          busy={busy}
          onCancel={() =>
            void call(
              () => api.deliveries.cancelRecovery(request),
              (answer) => setRecovery(answer.recovery),
            )
          }
        />
      )}
      {!active && <p>The subscription is disabled: enable it to recover its deliveries.</p>}
      {active && !running && (
        <form class="form" onSubmit={previewWindow} noValidate aria-label="Recovery window">
          <label>
            Failed since
            <input type="datetime-local" name="since" required />
          </label>
          <label>
            Until (empty: now)
            <input type="datetime-local" name="until" />
          </label>
          <div class="action-row">
            <button type="submit" disabled={busy}>
              Preview
            </button>
          </div>
        </form>
      )}
      {active && !running && preview && (
        <div role="status">
          <p>
            {formatCount(preview.answer.failed)} failed deliveries in the window
            {preview.answer.beyondLimit && "; more are failed than one job takes, so it takes the oldest"}.
          </p>
          {preview.answer.failed > 0 && (
            <button
              type="button"
              disabled={busy}
              onClick={() =>
                void call(
                  () => api.deliveries.recoverDeliveries({ ...request, ...preview.window, preview: false }),
                  (answer) => {
                    setPreview(undefined);
                    setRecovery(answer.recovery);
                  },
                )
              }
            >
              Recover {formatCount(preview.answer.failed)} deliveries
            </button>
          )}
        </div>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </section>
  );
}

interface Window {
  since: string;
  until: string | undefined;
}

function RecoveryProgress({
  recovery,
  busy,
  onCancel,
}: {
  recovery: Recovery;
  busy: boolean;
  onCancel: () => void;
}) {
  return (
    <>
      <dl class="facts" aria-label="Recovery job">
        <dt>Job</dt>
        <dd>
          <code>{recovery.id}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <span class={`status ${recovery.status}`}>{recovery.status}</span>
          {recovery.stoppedReason && ` (${recovery.stoppedReason.replaceAll("_", " ")})`}
        </dd>
        <dt>Window</dt>
        <dd>
          {formatTime(recovery.since)} to {formatTime(recovery.until)}
        </dd>
        <dt>Progress</dt>
        <dd>
          <progress aria-label="Deliveries done" max={recovery.total} value={recovery.done} />{" "}
          {formatCount(recovery.done)} of {formatCount(recovery.total)}: {formatCount(recovery.succeeded)}{" "}
          succeeded, {formatCount(recovery.failed)} failed again, {formatCount(recovery.skipped)} skipped
          {recovery.capped && " (the oldest of more failed deliveries)"}
        </dd>
      </dl>
      {recovery.status === "running" && (
        <button type="button" class="danger" disabled={busy} onClick={onCancel}>
          Cancel recovery
        </button>
      )}
    </>
  );
}
