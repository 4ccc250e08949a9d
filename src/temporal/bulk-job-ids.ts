import type { LogFilter, PageKey } from "../store/log-list-sql.js";
import { jobNumberAfter } from "./job-number.js";

/**
 * A bulk job of a workspace (D47) as Temporal shows it and as the API and the workflow both speak of it:
 * its workflow id, the input it carries across continue-as-new, and its progress. Pure, for the workflow,
 * its activities and the API alike.
 */

/** What a bulk job does to each execution it selects. */
export type BulkKind = "retry" | "cancel";

/** The most executions one job takes (D47): a selection beyond it is refused, naming the limit. */
export const maxBulkExecutions = 10_000;

/** `bulk-<kind>-<workspaceId>-<n>`: the workspace's n-th job of the kind, numbered from 1. */
export function bulkJobWorkflowId(kind: BulkKind, workspaceId: string, n: number): string {
  return `${bulkJobIdPrefix(kind, workspaceId)}${n}`;
}

export function bulkJobIdPrefix(kind: BulkKind, workspaceId: string): string {
  return `bulk-${kind}-${workspaceId}-`;
}

/** The n of a job's workflow id, or undefined for an id that is no job of this kind and workspace. */
export function bulkJobNumberOf(kind: BulkKind, workspaceId: string, workflowId: string): number | undefined {
  return jobNumberAfter(bulkJobIdPrefix(kind, workspaceId), workflowId);
}

/** Asks the job to start no further retries (CancelBulkJob); a cancel through Temporal does the same. */
export const cancelBulkJobSignal = "cancelBulkJob";
/** Answers the job's BulkJobState (GetBulkJob), while it runs and after it has ended. */
export const bulkJobProgressQuery = "bulkJobProgress";

/** What a bulk retry does to each execution it takes (RetryExecution's options, D47). */
export interface BulkRetryOptions {
  from: "start" | "failed_block";
  version: "original" | "current";
}

/**
 * The executions a job takes: ListLogs' filters, with startedTo no later than the job's start, so the
 * retries it makes (which start after it) are never selected by it, even when they fail again.
 */
export interface BulkSelection {
  filter: LogFilter;
}

export interface BulkCounts {
  /**
   * Retried: a new execution started (or found started, after a worker was lost mid-way). Cancel: Temporal
   * took its cancellation.
   */
  done: number;
  /**
   * Not retried: the execution's record refused it (RetryExecution's failed_precondition), or it is gone.
   * Cancel: it had ended when the job reached it.
   */
  failed: number;
}

export interface BulkRetryInput extends BulkSelection, BulkRetryOptions {
  workspaceId: string;
  /** Whom the retries run as and are billed to (D12): who asked for the job. */
  userId: string;
  /** The executions' task queue the retries start on. */
  taskQueue: string;
  /** The selection's executions when the job started, at most maxBulkExecutions. */
  total: number;
  startedAt: number;
  /** Carried from the run before, when the job continued as new. */
  carried?: { counts: BulkCounts; after?: PageKey | undefined; lastFailure?: string | undefined };
}

export type BulkJobStatus = "running" | "completed" | "cancelled" | "stopped";

/** Why a job stopped before its end: the month's usage is spent, the caller left the workspace, or Temporal. */
export type BulkJobStop = "usage_limit" | "not_a_member" | "ended_in_temporal";

/**
 * The running executions a bulk cancel takes (D47): Temporal's list of the workspace's running executions,
 * by their search attributes (running-executions.ts), started no later than the job.
 */
export interface RunningSelection {
  workspaceId: string;
  /** Absent: any workflow; empty: none (the folders asked for hold no workflow). */
  workflowIds?: string[] | undefined;
  triggers?: string[] | undefined;
  startedFrom?: number | undefined;
  startedTo: number;
}

export interface BulkCancelInput {
  workspaceId: string;
  /** Whose cancels they are: who asked for the job, a member of the workspace while it runs. */
  userId: string;
  selection: RunningSelection;
  /** The cancelled entries' reason. */
  reason: string;
  /** The selection's count when the job was asked for, at most maxBulkExecutions. */
  total: number;
  startedAt: number;
  /** Carried from the run before, when the job continued as new: the executions still to cancel. */
  carried?: { counts: BulkCounts; remaining: string[]; lastFailure?: string | undefined };
}

/** What GetBulkJob shows of a job; the workflow's result is its last state. */
export interface BulkJobState extends BulkCounts, Partial<BulkRetryOptions> {
  kind: BulkKind;
  workspaceId: string;
  status: BulkJobStatus;
  total: number;
  startedAt: number;
  endedAt?: number;
  /** When the job waits for a token of the caller's async bucket (D12), until when. */
  waitingUntil?: number;
  /** The newest refusal, naming its execution. */
  lastFailure?: string;
  stoppedReason?: BulkJobStop;
}
