import { Code, ConnectError } from "@connectrpc/connect";
import { Context } from "@temporalio/activity";
import type { Client } from "@temporalio/client";
import {
  type BulkCancelInput,
  type BulkJobStop,
  maxBulkExecutions,
  type RunningSelection,
} from "../bulk-job-ids.js";
import { cancelRunningExecution } from "../execution-cancel.js";
import { listRunningExecutions } from "../running-executions.js";
import type { ActivityDeps } from "./deps.js";

/** The job as a batch needs it: whose workspace, who asks, and the reason each entry gives. */
export type BulkCancelJob = Pick<BulkCancelInput, "workspaceId" | "userId" | "reason">;

/** What became of each execution of a batch, in order; the batch ends early when the job must stop. */
export interface BulkCancelBatch {
  outcomes: ({ cancelled: string } | { failed: string })[];
  stop?: BulkJobStop;
}

/**
 * The store's and Temporal's side of a bulk cancel job (D47): its selection, listed once from Temporal's
 * visibility, and the cancels, each as CancelExecution makes it (execution-cancel.ts). A batch heartbeats
 * its outcomes as it goes, and an attempt after the first (its worker lost, a heartbeat late on a busy
 * machine, an error) takes those over instead of asking again: an execution the earlier attempt cancelled
 * has ended by now and would be counted failed. Only the cancels after the last heartbeat the server
 * recorded are asked again; Temporal takes a second request for a cancellation as the first.
 */
export function bulkCancelActivities(deps: ActivityDeps, temporal: Client) {
  return {
    /** The running executions the job cancels, oldest last as Temporal lists them, at most the cap. */
    async bulkCancelSelection(selection: RunningSelection): Promise<string[]> {
      return listRunningExecutions(temporal, selection, maxBulkExecutions);
    },

    /** Cancels the executions in order, while the one who asked is a member of the workspace. */
    async bulkCancelBatch({
      job,
      executionIds,
    }: {
      job: BulkCancelJob;
      executionIds: string[];
    }): Promise<BulkCancelBatch> {
      const context = Context.current();
      const outcomes: BulkCancelBatch["outcomes"] = earlierOutcomes(
        context.info.heartbeatDetails,
        executionIds,
      );
      if (!(await deps.store.accounts.isMember(job.userId, job.workspaceId))) {
        return { outcomes, stop: "not_a_member" };
      }
      // The selection names only the workspace's executions; this holds whatever the list said.
      const owned = async (workspaceId: string | undefined) => {
        if (workspaceId !== job.workspaceId) throw new ConnectError("not the job's workspace", Code.NotFound);
      };
      for (const executionId of executionIds.slice(outcomes.length)) {
        context.heartbeat(outcomes);
        try {
          await cancelRunningExecution({ store: deps.store, temporal }, executionId, job.reason, owned);
          outcomes.push({ cancelled: executionId });
        } catch (error) {
          // Ended before the job reached it, or gone; anything else is the activity's retry.
          if (!(error instanceof ConnectError) || error.code === Code.Unavailable) throw error;
          outcomes.push({ failed: `execution ${executionId}: ${error.rawMessage}` });
        }
      }
      return { outcomes };
    },
  };
}

/**
 * The outcomes an earlier attempt of the batch heartbeated: those of its first executions, in order, since
 * every attempt of an activity has the same input.
 */
function earlierOutcomes(details: unknown, executionIds: string[]): BulkCancelBatch["outcomes"] {
  return Array.isArray(details) && details.length <= executionIds.length ? [...details] : [];
}
