import {
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  workflowInfo,
} from "@temporalio/workflow";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";
import type { BulkJobState, BulkRetryInput } from "../bulk-job-ids.js";
import { bulkJobProgress } from "./bulk-job-progress.js";

/** Pages are read a few hundred keys at a time: small in the history. */
const { bulkPage } = proxyActivities<Activities>({
  startToCloseTimeout: "1 minute",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute" },
});
/**
 * A batch heartbeats at each execution, so a lost worker's batch moves to another within seconds; the
 * batch run again finds the retries already started (bulk-activities.ts).
 */
const { bulkRetryBatch } = proxyActivities<Activities>({
  startToCloseTimeout: "5 minutes",
  heartbeatTimeout: "10 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute" },
});

const pageSize = 200;
/** Retries one activity makes: a few seconds of work, so a cancel or a lost worker costs little. */
const batchSize = 20;
/** Executions a run takes before it continues as new: bounds the history of a job of 10,000. */
const executionsPerRun = 2_000;

/**
 * Before it, a run continued as new only between two pages, so a job of fewer than a page never did, and a
 * page whose batches each waited for the bucket (D12) grew the history by two hundred activities and
 * timers past Temporal's suggestion. Now between two batches too; a run begun before replays as written.
 */
export const continuedBetweenBatches = "bulk-retry-continued-between-batches";

/**
 * A workspace's bulk retry job (D47): retries the executions its selection held when it started, oldest
 * first, each as RetryExecution would, billed to who asked. An empty async bucket makes it wait for the
 * next token rather than fail (D12); the month's usage spent stops it. Its progress is its own state,
 * answered to the query while it runs and after it ends, and its result. CancelBulkJob's signal, or a
 * cancel through Temporal, stops it between two retries.
 */
export async function bulkRetry(input: BulkRetryInput): Promise<BulkJobState> {
  const { carried, ...job } = input;
  const progress = bulkJobProgress(
    {
      kind: "retry",
      workspaceId: job.workspaceId,
      from: job.from,
      version: job.version,
      total: job.total,
      startedAt: job.startedAt,
    },
    carried,
  );
  const batchJob = {
    jobId: workflowInfo().workflowId,
    workspaceId: job.workspaceId,
    userId: job.userId,
    taskQueue: job.taskQueue,
    from: job.from,
    version: job.version,
  };

  let after = carried?.after;
  let takenThisRun = 0;
  // Only once this run has taken some: a suggestion from its first task on (a server's low limit) would
  // otherwise hand the job from run to run with none taken.
  const longEnough = () =>
    takenThisRun > 0 && (takenThisRun >= executionsPerRun || workflowInfo().continueAsNewSuggested);
  const continued = () =>
    continueAsNew<typeof bulkRetry>({ ...input, carried: { ...progress.carried(), after } });
  try {
    while (!progress.cancelled() && progress.taken() < job.total) {
      if (longEnough()) await continued();
      const page = await bulkPage({
        filter: job.filter,
        after,
        limit: Math.min(pageSize, job.total - progress.taken()),
      });
      if (page.executions.length === 0) break;
      let queue = page.executions;
      while (queue.length > 0 && !progress.cancelled()) {
        const batch = queue.slice(0, batchSize);
        // Not cut by a cancel through Temporal: the retries a batch starts are counted, and it is short.
        const result = await CancellationScope.nonCancellable(() =>
          bulkRetryBatch({ job: batchJob, executionIds: batch.map((e) => e.executionId) }),
        );
        progress.count(result.outcomes);
        const through = result.outcomes.length;
        if (through > 0) after = batch[through - 1]?.key;
        takenThisRun += through;
        queue = queue.slice(through);
        if (result.stop) return progress.finish("stopped", result.stop);
        if (result.waitMs !== undefined) {
          // D47: the bucket is waited for, on a timer a cancel cuts short.
          progress.waiting(Date.now() + result.waitMs);
          await condition(progress.cancelled, result.waitMs);
          progress.waiting(undefined);
        }
        // The next run reads the rest of the page again, after `after`.
        if (queue.length > 0 && !progress.cancelled() && longEnough() && patched(continuedBetweenBatches)) {
          await continued();
        }
      }
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    progress.cancel();
  }
  return progress.finish(progress.cancelled() ? "cancelled" : "completed");
}
