import { useEffect, useState } from "preact/hooks";
import type { BulkJob } from "../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { errorMessage } from "./api.js";
import { useSession } from "./context.js";
import { formatCount, formatTime } from "./format.js";
import { filtersFromParams } from "./log-filters.js";
import { type RetryChoice, RetryOptions, retryChoiceOf } from "./retry-options.js";
import { useAction } from "./use-action.js";

/** How often a running job's progress is read again. */
const progressEveryMs = 1_000;

/**
 * D47 on a filtered logs view: retry every execution its filters select as one job. The count comes first
 * (a preview, which starts nothing), then the job, whose progress is read while it runs and which can be
 * cancelled. A view of one execution is left to its entry's page: the bulk call has no such filter.
 */
export function BulkRetrySection({ params }: { params: URLSearchParams }) {
  const { api, workspaceId } = useSession();
  const { busy, error, run } = useAction();
  const [preview, setPreview] = useState<{ choice: RetryChoice; executions: number }>();
  const [job, setJob] = useState<BulkJob>();
  const [readError, setReadError] = useState<string>();
  const { executionId: _, ...filters } = filtersFromParams(params);
  const view = params.toString();

  // A new view asks anew.
  useEffect(() => {
    setPreview(undefined);
    setJob(undefined);
  }, [workspaceId, view]);

  // The job's progress, again while it runs.
  useEffect(() => {
    if (job?.status !== "running") return;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      api.workflows.getBulkJob({ workspaceId, id: job.id }, { signal: controller.signal }).then(
        (answer) => {
          setReadError(undefined);
          if (answer.job) setJob(answer.job);
        },
        (caught: unknown) => {
          if (controller.signal.aborted) return;
          setReadError(errorMessage(caught));
          // Read again: a worker may answer next time (the server says when none did).
          setJob({ ...job });
        },
      );
    }, progressEveryMs);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [job]);

  if (params.get("execution")) return null;

  function previewIt(event: Event) {
    event.preventDefault();
    const choice = retryChoiceOf(event.currentTarget as HTMLFormElement);
    void run(
      () => api.workflows.bulkRetryExecutions({ workspaceId, ...filters, ...choice, preview: true }),
      (answer) => setPreview({ choice, executions: answer.executions }),
    );
  }

  return (
    <details class="bulk-retry" open={job !== undefined || undefined}>
      <summary>Retry the executions of this view</summary>
      {job ? (
        <BulkJobProgress
          job={job}
          busy={busy}
          onCancel={() =>
            void run(
              () => api.workflows.cancelBulkJob({ workspaceId, id: job.id }),
              (answer) => answer.job && setJob(answer.job),
            )
          }
        />
      ) : (
        <>
          <form class="form retry" onSubmit={previewIt} aria-label="Bulk retry">
            <RetryOptions />
            <div class="action-row">
              <button type="submit" disabled={busy}>
                Preview
              </button>
            </div>
          </form>
          {preview && (
            <div role="status">
              <p>
                {formatCount(preview.executions)} {preview.executions === 1 ? "execution" : "executions"}{" "}
                match this view.
              </p>
              {preview.executions > 0 && (
                <button
                  type="button"
                  disabled={busy}
                  onClick={() =>
                    void run(
                      () => api.workflows.bulkRetryExecutions({ workspaceId, ...filters, ...preview.choice }),
                      (answer) => {
                        setPreview(undefined);
                        if (answer.job) setJob(answer.job);
                      },
                    )
                  }
                >
                  Retry {formatCount(preview.executions)}{" "}
                  {preview.executions === 1 ? "execution" : "executions"}
                </button>
              )}
            </div>
          )}
        </>
      )}
      {(error ?? readError) && (
        <p role="alert" class="error">
          {error ?? readError}
        </p>
      )}
    </details>
  );
}

function BulkJobProgress({ job, busy, onCancel }: { job: BulkJob; busy: boolean; onCancel: () => void }) {
  return (
    <>
      <dl class="facts" aria-label="Bulk retry job">
        <dt>Job</dt>
        <dd>
          <code>{job.id}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <span class={`status ${job.status}`}>{job.status}</span>
          {job.stoppedReason && ` (${job.stoppedReason.replaceAll("_", " ")})`}
          {job.waitingUntil && `, waiting for the execution bucket until ${formatTime(job.waitingUntil)}`}
        </dd>
        <dt>Progress</dt>
        <dd>
          <progress aria-label="Executions processed" max={job.total} value={job.processed} />{" "}
          {formatCount(job.processed)} of {formatCount(job.total)}: {formatCount(job.done)} retried,{" "}
          {formatCount(job.failed)} refused
        </dd>
        {job.lastFailure && (
          <>
            <dt>Last refusal</dt>
            <dd>{job.lastFailure}</dd>
          </>
        )}
      </dl>
      {job.status === "running" && (
        <button type="button" class="danger" disabled={busy} onClick={onCancel}>
          Cancel the job
        </button>
      )}
    </>
  );
}
