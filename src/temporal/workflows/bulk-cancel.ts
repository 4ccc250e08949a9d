import {
  CancellationScope,
  continueAsNew,
  isCancellation,
  proxyActivities,
  workflowInfo,
} from "@temporalio/workflow";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";
import type { BulkCancelInput, BulkJobState } from "../bulk-job-ids.js";
import { bulkJobProgress } from "./bulk-job-progress.js";

/** The selection is one visibility list of at most 10,000 ids, read once. */
const { bulkCancelSelection } = proxyActivities<Activities>({
  startToCloseTimeout: "2 minutes",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute" },
});
/** A batch heartbeats at each execution, so a lost worker's batch moves to another within seconds. */
const { bulkCancelBatch } = proxyActivities<Activities>({
  startToCloseTimeout: "5 minutes",
  heartbeatTimeout: "10 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute" },
});

/** Cancels one activity asks for: a few seconds of work, so a cancel of the job or a lost worker costs little. */
const batchSize = 20;
/** Executions a run takes before it continues as new, carrying the rest: bounds the history. */
const executionsPerRun = 2_000;

/**
 * A workspace's bulk cancel job (D47): cancels the running executions its selection held when it started,
 * each as CancelExecution would. Its progress is its own state, answered to the query while it runs and
 * after it ends, and its result. CancelBulkJob's signal, or a cancel through Temporal, stops it between
 * two batches.
 */
export async function bulkCancel(input: BulkCancelInput): Promise<BulkJobState> {
  const { carried, ...job } = input;
  const facts = {
    kind: "cancel" as const,
    workspaceId: job.workspaceId,
    total: job.total,
    startedAt: job.startedAt,
  };
  const progress = bulkJobProgress(facts, carried);
  // Each entry says why it was cancelled: as asked, or by which job.
  const reason = job.reason === "" ? `bulk job ${workflowInfo().workflowId}` : job.reason;
  const batchJob = { workspaceId: job.workspaceId, userId: job.userId, reason };

  try {
    let remaining = carried?.remaining;
    if (remaining === undefined) {
      remaining = await bulkCancelSelection(job.selection);
      // What runs now: some of those counted may have ended since, none started after the job is taken.
      facts.total = Math.min(facts.total, remaining.length);
      remaining = remaining.slice(0, facts.total);
    }
    let takenThisRun = 0;
    // Only once this run has taken some: a suggestion from its first task on (a server's low limit) would
    // otherwise hand the job from run to run with none taken.
    const longEnough = () =>
      takenThisRun > 0 && (takenThisRun >= executionsPerRun || workflowInfo().continueAsNewSuggested);
    while (!progress.cancelled() && remaining.length > 0) {
      if (longEnough()) {
        await continueAsNew<typeof bulkCancel>({
          ...input,
          total: facts.total,
          carried: { ...progress.carried(), remaining },
        });
      }
      const batch = remaining.slice(0, batchSize);
      // Not cut by a cancel through Temporal: the cancels a batch asks for are counted, and it is short.
      const result = await CancellationScope.nonCancellable(() =>
        bulkCancelBatch({ job: batchJob, executionIds: batch }),
      );
      progress.count(result.outcomes);
      takenThisRun += result.outcomes.length;
      remaining = remaining.slice(result.outcomes.length);
      if (result.stop) return progress.finish("stopped", result.stop);
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    progress.cancel();
  }
  return progress.finish(progress.cancelled() ? "cancelled" : "completed");
}
