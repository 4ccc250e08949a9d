import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  WorkflowNotFoundError,
} from "@temporalio/client";
import { deliverySearchAttributes, deliveryTaskQueue } from "./delivery-ids.js";
import {
  cancelRecoverySignal,
  type RecoveryInput,
  type RecoveryState,
  recoveryNumberOf,
  recoveryProgressQuery,
  recoveryWorkflowId,
} from "./recovery-ids.js";
import { flowlogSearchAttributes } from "./search-attributes.js";
// A type only: the API server never loads workflow code.
import type { recoverDeliveries } from "./workflows/index.js";
import { workspacePriority } from "./workspace-priority.js";

/** How long GetRecovery waits for a worker to answer a job's progress. */
const progressQueryTimeoutMs = 10_000;

/** A subscription's newest recovery job, as Temporal described it (D37). */
export interface RecoveryJob {
  handle: WorkflowHandle<typeof recoverDeliveries>;
  n: number;
  /** Temporal's status of its latest run: RUNNING, COMPLETED, TERMINATED, ... */
  status: string;
  running: boolean;
  closedAt?: number | undefined;
}

/** Why a job could not start: one runs (its id), or another request started one at the same moment. */
export type RecoveryStart = { started: RecoveryJob } | { running: string };

/**
 * The recovery jobs of subscriptions, kept in Temporal alone (D37): the n of `recover-<subscriptionId>-<n>`
 * counts a subscription's jobs, and Temporal's refusal to start an id twice is what lets only one job run.
 * Jobs stay readable for the namespace's retention, after which a subscription's numbering may begin
 * again.
 */
export function recoveryJobs(temporal: Client, executionTaskQueue: string) {
  const handleOf = (subscriptionId: string, n: number) =>
    temporal.workflow.getHandle<typeof recoverDeliveries>(recoveryWorkflowId(subscriptionId, n));

  const describe = async (subscriptionId: string, n: number): Promise<RecoveryJob | undefined> => {
    const handle = handleOf(subscriptionId, n);
    try {
      const { status, closeTime } = await handle.describe();
      return {
        handle,
        n,
        status: status.name,
        running: status.name === "RUNNING",
        closedAt: closeTime?.getTime(),
      };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    }
  };

  /** The highest n visibility lists for the subscription: it may lag a start by a moment. */
  const newestListed = async (subscriptionId: string): Promise<number> => {
    let newest = 0;
    const query = `WorkflowType = 'recoverDeliveries' AND ${flowlogSearchAttributes.subscriptionId.name} = '${subscriptionId}'`;
    for await (const job of temporal.workflow.list({ query })) {
      newest = Math.max(newest, recoveryNumberOf(subscriptionId, job.workflowId) ?? 0);
    }
    return newest;
  };

  /**
   * The newest job: from the newest visibility lists, the ids after it are described one by one until
   * one is not there (describe sees a start at once), so a job started a moment ago is never missed.
   */
  const newest = async (subscriptionId: string): Promise<RecoveryJob | undefined> => {
    const listed = await newestListed(subscriptionId);
    let job = listed > 0 ? await describe(subscriptionId, listed) : undefined;
    for (let n = listed + 1; ; n++) {
      const next = await describe(subscriptionId, n);
      if (!next) return job;
      job = next;
    }
  };

  return {
    newest,

    /** Starts the subscription's next job on the deliveries' queue, unless one runs (D37). */
    async start(input: RecoveryInput): Promise<RecoveryStart> {
      const latest = await newest(input.subscriptionId);
      if (latest?.running) return { running: latest.handle.workflowId };
      const n = (latest?.n ?? 0) + 1;
      const workflowId = recoveryWorkflowId(input.subscriptionId, n);
      try {
        await temporal.workflow.start<typeof recoverDeliveries>("recoverDeliveries", {
          workflowId,
          taskQueue: deliveryTaskQueue(executionTaskQueue),
          args: [input],
          workflowIdReusePolicy: "REJECT_DUPLICATE",
          typedSearchAttributes: deliverySearchAttributes(input),
          priority: workspacePriority(input.workspaceId),
        });
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) return { running: workflowId };
        throw error;
      }
      const started = { handle: handleOf(input.subscriptionId, n), n, status: "RUNNING", running: true };
      return { started };
    },

    /**
     * Where a job stands as it was described: an ended job's result, a running one's answer to the query
     * (which a worker gives). One ended in Temporal without finishing (terminated, timed out) is read by
     * the query too, which replays its history, and shown as stopped, with why.
     */
    async progress(job: RecoveryJob): Promise<RecoveryState> {
      if (job.status === "COMPLETED") return await job.handle.result();
      // A query waits for a worker; with none polling the deliveries' queue, the caller hears so in time.
      const state = await temporal.withDeadline(Date.now() + progressQueryTimeoutMs, () =>
        job.handle.query<RecoveryState>(recoveryProgressQuery),
      );
      if (job.running || state.status !== "running") return state;
      return { ...state, status: "stopped", stoppedReason: "ended_in_temporal", endedAt: job.closedAt };
    },

    /** Asks a running job to start no further series (CancelRecovery). */
    async cancel(job: RecoveryJob): Promise<void> {
      await job.handle.signal(cancelRecoverySignal);
    },
  };
}
