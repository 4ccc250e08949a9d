import { defineQuery, defineSignal, setHandler } from "@temporalio/workflow";
import {
  type BulkCounts,
  type BulkJobState,
  type BulkJobStop,
  bulkJobProgressQuery,
  cancelBulkJobSignal,
} from "../bulk-job-ids.js";

const cancel = defineSignal(cancelBulkJobSignal);
const progress = defineQuery<BulkJobState>(bulkJobProgressQuery);

/** What a job says of itself that its progress does not count: its kind, workspace, options, start. */
export type BulkJobFacts = Omit<
  BulkJobState,
  keyof BulkCounts | "status" | "endedAt" | "waitingUntil" | "lastFailure" | "stoppedReason"
>;

/**
 * A bulk job's own state (D47), for both kinds' workflows: its counts, carried across continue-as-new,
 * answered to GetBulkJob's query while it runs and after it ends, and whether CancelBulkJob's signal came.
 */
export function bulkJobProgress(
  facts: BulkJobFacts,
  carried: { counts: BulkCounts; lastFailure?: string | undefined } | undefined,
) {
  const counts: BulkCounts = { ...(carried?.counts ?? { done: 0, failed: 0 }) };
  let lastFailure = carried?.lastFailure;
  let waitingUntil: number | undefined;
  let ended: BulkJobState | undefined;
  let cancelled = false;
  const state = (): BulkJobState => ({
    ...facts,
    ...counts,
    status: "running",
    ...(waitingUntil === undefined ? {} : { waitingUntil }),
    ...(lastFailure === undefined ? {} : { lastFailure }),
  });
  setHandler(progress, () => ended ?? state());
  setHandler(cancel, () => {
    cancelled = true;
  });

  return {
    counts,
    cancelled: () => cancelled,
    cancel: () => {
      cancelled = true;
    },
    /** What a run hands the next when it continues as new. */
    carried: () => ({ counts, lastFailure }),
    taken: () => counts.done + counts.failed,
    /** A batch's outcomes: a `failed` one names its execution and why; any other is done. */
    count(outcomes: readonly ({ failed: string } | Record<string, string>)[]) {
      for (const outcome of outcomes) {
        if (typeof outcome.failed === "string") {
          counts.failed++;
          lastFailure = outcome.failed;
        } else counts.done++;
      }
    },
    /** Until when the job waits on a timer (a bulk retry's bucket, D12), or undefined once it goes on. */
    waiting(until: number | undefined) {
      waitingUntil = until;
    },
    finish(status: BulkJobState["status"], stoppedReason?: BulkJobStop): BulkJobState {
      waitingUntil = undefined;
      ended = { ...state(), status, endedAt: Date.now(), ...(stoppedReason ? { stoppedReason } : {}) };
      return ended;
    },
  };
}
