import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  WorkflowNotFoundError,
  type WorkflowStartOptions,
} from "@temporalio/client";
import type { Workflow } from "@temporalio/common";

/** How long a read of a running job's progress waits for a worker to answer its query. */
const progressQueryTimeoutMs = 10_000;

/** A numbered job as Temporal described it: a recovery job (D37) or a bulk job (D47). */
export interface NumberedJob<W extends Workflow = Workflow> {
  handle: WorkflowHandle<W>;
  n: number;
  /** Temporal's status of its latest run: RUNNING, COMPLETED, TERMINATED, ... */
  status: string;
  running: boolean;
  closedAt?: number | undefined;
}

/** Why a job could not start: one runs (its id), or another request started one at the same moment. */
export type NumberedJobStart<W extends Workflow = Workflow> =
  | { started: NumberedJob<W> }
  | { running: string };

/** A kind of numbered job: its workflow, how its ids are made and read, and how it is asked and told. */
export interface NumberedJobKind {
  workflowType: string;
  /** The owner's n-th job's workflow id. */
  workflowId(owner: string, n: number): string;
  /** The n of a job's workflow id, or undefined for an id that is no job of this kind and owner. */
  numberOf(owner: string, workflowId: string): number | undefined;
  /** The visibility query's condition, beside the workflow type, that lists the owner's jobs. */
  ownerQuery(owner: string): string;
  progressQuery: string;
  cancelSignal: string;
}

/** What every numbered job's progress says, beside its own counts. */
export interface NumberedJobState {
  status: "running" | "completed" | "cancelled" | "stopped";
  endedAt?: number | undefined;
  /** While it waits on a timer (a bulk retry's bucket, D47): until when. */
  waitingUntil?: number | undefined;
  stoppedReason?: string | undefined;
}

/**
 * Jobs kept in Temporal alone (D37, D47): the n of a job's workflow id counts its owner's jobs of the kind
 * (a subscription's recoveries, a workspace's bulk retries), and Temporal's refusal to start an id twice is
 * what lets only one of them run at a time. Jobs stay readable for the namespace's retention, after which
 * an owner's numbering may begin again.
 */
export function numberedJobs<W extends Workflow, State extends NumberedJobState>(
  temporal: Client,
  kind: NumberedJobKind,
) {
  type Job = NumberedJob<W>;
  const handleOf = (owner: string, n: number) => temporal.workflow.getHandle<W>(kind.workflowId(owner, n));

  const describe = async (owner: string, n: number): Promise<Job | undefined> => {
    const handle = handleOf(owner, n);
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

  /** The highest n visibility lists for the owner: it may lag a start by a moment. */
  const newestListed = async (owner: string): Promise<number> => {
    let newest = 0;
    const query = `WorkflowType = '${kind.workflowType}' AND ${kind.ownerQuery(owner)}`;
    for await (const job of temporal.workflow.list({ query })) {
      newest = Math.max(newest, kind.numberOf(owner, job.workflowId) ?? 0);
    }
    return newest;
  };

  /**
   * The newest job: from the newest visibility lists, the ids after it are described one by one until
   * one is not there (describe sees a start at once), so a job started a moment ago is never missed.
   */
  const newest = async (owner: string): Promise<Job | undefined> => {
    const listed = await newestListed(owner);
    let job = listed > 0 ? await describe(owner, listed) : undefined;
    for (let n = listed + 1; ; n++) {
      const next = await describe(owner, n);
      if (!next) return job;
      job = next;
    }
  };

  return {
    newest,

    /** The job of this id, when it is one of the owner's. */
    async byId(owner: string, workflowId: string): Promise<Job | undefined> {
      const n = kind.numberOf(owner, workflowId);
      return n === undefined ? undefined : describe(owner, n);
    },

    /** Starts the owner's next job, unless one runs. */
    async start(
      owner: string,
      options: Omit<WorkflowStartOptions<W>, "workflowId" | "workflowIdReusePolicy">,
    ): Promise<NumberedJobStart<W>> {
      const latest = await newest(owner);
      if (latest?.running) return { running: latest.handle.workflowId };
      const n = (latest?.n ?? 0) + 1;
      const workflowId = kind.workflowId(owner, n);
      try {
        await temporal.workflow.start<W>(kind.workflowType, {
          ...options,
          workflowId,
          workflowIdReusePolicy: "REJECT_DUPLICATE",
        } as WorkflowStartOptions<W>);
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) return { running: workflowId };
        throw error;
      }
      return { started: { handle: handleOf(owner, n), n, status: "RUNNING", running: true } };
    },

    /**
     * Where a job stands as it was described: an ended job's result, a running one's answer to the query
     * (which a worker gives). One ended in Temporal without finishing is read by the query too, which
     * replays its history, and shown as stopped, with why.
     */
    async progress(job: Job): Promise<State> {
      if (job.status === "COMPLETED") return (await job.handle.result()) as State;
      // A query waits for a worker; with none polling the job's queue, the caller hears so in time.
      const state = await temporal.withDeadline(Date.now() + progressQueryTimeoutMs, () =>
        job.handle.query<State>(kind.progressQuery),
      );
      if (job.running || state.status !== "running") return state;
      const { waitingUntil: _, ...stopped } = state;
      return {
        ...stopped,
        status: "stopped",
        stoppedReason: "ended_in_temporal",
        endedAt: job.closedAt,
      } as State;
    },

    /** Asks a running job to start no further work; what it started goes on. */
    async cancel(job: Job): Promise<void> {
      await job.handle.signal(kind.cancelSignal);
    },
  };
}
