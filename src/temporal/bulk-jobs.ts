import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  WorkflowNotFoundError,
} from "@temporalio/client";
import {
  type BulkJobState,
  type BulkKind,
  type BulkRetryInput,
  bulkJobNumberOf,
  bulkJobProgressQuery,
  bulkJobWorkflowId,
  cancelBulkJobSignal,
} from "./bulk-job-ids.js";
import { flowlogSearchAttributes } from "./search-attributes.js";
// A type only: the API server never loads workflow code.
import type { bulkRetry } from "./workflows/index.js";
import { workspacePriority } from "./workspace-priority.js";

/** How long GetBulkJob waits for a worker to answer a running job's progress. */
const progressQueryTimeoutMs = 10_000;

/** A bulk job as Temporal described it (D47). */
export interface BulkJob {
  handle: WorkflowHandle<typeof bulkRetry>;
  n: number;
  /** Temporal's status of its latest run: RUNNING, COMPLETED, TERMINATED, ... */
  status: string;
  running: boolean;
  closedAt?: number | undefined;
}

/** Why a job could not start: one of the kind runs in the workspace (its id). */
export type BulkJobStart = { started: BulkJob } | { running: string };

/**
 * A workspace's bulk jobs, kept in Temporal alone (D47), as recovery jobs are (recovery-jobs.ts): the n of
 * `bulk-<kind>-<workspaceId>-<n>` counts the workspace's jobs of the kind, and Temporal's refusal to start
 * an id twice lets only one of them run at a time. The Temporal UI finds them by FlowlogWorkspaceId and
 * shows what each was asked in its memo.
 */
export function bulkJobs(temporal: Client, kind: BulkKind) {
  const workflowType = "bulkRetry";

  const describe = async (workspaceId: string, n: number): Promise<BulkJob | undefined> => {
    const handle = temporal.workflow.getHandle<typeof bulkRetry>(bulkJobWorkflowId(kind, workspaceId, n));
    try {
      const { status, closeTime } = await handle.describe();
      const running = status.name === "RUNNING";
      return { handle, n, status: status.name, running, closedAt: closeTime?.getTime() };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    }
  };

  /** The highest n visibility lists: it may lag a start by a moment, so the ids after it are described. */
  const newest = async (workspaceId: string): Promise<BulkJob | undefined> => {
    let listed = 0;
    const query = `WorkflowType = '${workflowType}' AND ${flowlogSearchAttributes.workspaceId.name} = '${workspaceId}'`;
    for await (const job of temporal.workflow.list({ query })) {
      listed = Math.max(listed, bulkJobNumberOf(kind, workspaceId, job.workflowId) ?? 0);
    }
    let job = listed > 0 ? await describe(workspaceId, listed) : undefined;
    for (let n = listed + 1; ; n++) {
      const next = await describe(workspaceId, n);
      if (!next) return job;
      job = next;
    }
  };

  return {
    /** The job of this id, when it is one of the workspace's. */
    async byId(workspaceId: string, workflowId: string): Promise<BulkJob | undefined> {
      const n = bulkJobNumberOf(kind, workspaceId, workflowId);
      return n === undefined ? undefined : describe(workspaceId, n);
    },

    /** Starts the workspace's next job on the executions' queue, unless one runs. */
    async start(input: BulkRetryInput, memo: Record<string, unknown>): Promise<BulkJobStart> {
      const latest = await newest(input.workspaceId);
      if (latest?.running) return { running: latest.handle.workflowId };
      const n = (latest?.n ?? 0) + 1;
      const workflowId = bulkJobWorkflowId(kind, input.workspaceId, n);
      try {
        await temporal.workflow.start<typeof bulkRetry>(workflowType, {
          workflowId,
          taskQueue: input.taskQueue,
          args: [input],
          workflowIdReusePolicy: "REJECT_DUPLICATE",
          typedSearchAttributes: [{ key: flowlogSearchAttributes.workspaceId, value: input.workspaceId }],
          memo,
          priority: workspacePriority(input.workspaceId),
        });
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) return { running: workflowId };
        throw error;
      }
      const handle = temporal.workflow.getHandle<typeof bulkRetry>(workflowId);
      return { started: { handle, n, status: "RUNNING", running: true } };
    },

    /**
     * Where a job stands: an ended job's result, a running one's answer to the query (which a worker
     * gives). One ended in Temporal without finishing is read by the query, which replays its history,
     * and shown as stopped.
     */
    async progress(job: BulkJob): Promise<BulkJobState> {
      if (job.status === "COMPLETED") return await job.handle.result();
      const state = await temporal.withDeadline(Date.now() + progressQueryTimeoutMs, () =>
        job.handle.query<BulkJobState>(bulkJobProgressQuery),
      );
      if (job.running || state.status !== "running") return state;
      const { waitingUntil: _, ...stopped } = state;
      return { ...stopped, status: "stopped", stoppedReason: "ended_in_temporal", endedAt: job.closedAt };
    },

    /** Asks a running job to start no further retries (CancelBulkJob). */
    async cancel(job: BulkJob): Promise<void> {
      await job.handle.signal(cancelBulkJobSignal);
    },
  };
}
