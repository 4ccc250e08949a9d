import { useState } from "preact/hooks";
import { useSession } from "./context.js";
import { RetryOptions, retryChoiceOf } from "./retry-options.js";
import { routeHref } from "./router.js";
import { useAction } from "./use-action.js";

/**
 * D47 on an entry's page: run its execution again (from the start or from the block that failed, on the
 * version it ran or the workflow's now), and cancel a running one. The entry is of an ended execution, so
 * what can be cancelled is the retry just started, while it runs; the server says when it has ended.
 */
export function ExecutionControls({ executionId }: { executionId: string }) {
  const { api, workspaceId } = useSession();
  const { busy, error, run } = useAction();
  const [retry, setRetry] = useState<{ executionId: string; version: number }>();
  const [cancelled, setCancelled] = useState<string>();

  function retryIt(event: Event) {
    event.preventDefault();
    const choice = retryChoiceOf(event.currentTarget as HTMLFormElement);
    void run(
      () => api.workflows.retryExecution({ executionId, ...choice }),
      (answer) => {
        setCancelled(undefined);
        setRetry({ executionId: answer.executionId, version: answer.version });
      },
    );
  }

  return (
    <section aria-labelledby="controls-title">
      <h2 id="controls-title">Run again</h2>
      <form class="form retry" onSubmit={retryIt} aria-label="Retry the execution">
        <RetryOptions />
        <div class="action-row">
          <button type="submit" disabled={busy}>
            Retry
          </button>
        </div>
      </form>
      {retry && (
        <div role="status">
          <p>
            Retry started: execution <code>{retry.executionId}</code> on version {retry.version}. Its entry
            appears in the{" "}
            <a href={routeHref("logs", undefined, { ws: workspaceId, execution: retry.executionId })}>logs</a>{" "}
            when it ends.
          </p>
          {cancelled === retry.executionId ? (
            <p>Cancellation asked: the retry is logged as cancelled as it stops.</p>
          ) : (
            <form
              class="form"
              aria-label="Cancel the retry"
              onSubmit={(event) => {
                event.preventDefault();
                const reason = String(
                  new FormData(event.currentTarget as HTMLFormElement).get("reason") ?? "",
                );
                void run(
                  () => api.workflows.cancelExecution({ executionId: retry.executionId, reason }),
                  () => setCancelled(retry.executionId),
                );
              }}
            >
              <label>
                Reason (optional)
                <input name="reason" maxLength={500} />
              </label>
              <div class="action-row">
                <button type="submit" class="danger" disabled={busy}>
                  Cancel the retry
                </button>
              </div>
            </form>
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
