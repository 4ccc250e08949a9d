import { jobNumberAfter } from "./job-number.js";

/**
 * A subscription's recovery job (D37) as Temporal shows it and as the API and the workflow both speak of
 * it: its workflow id, the input it carries across continue-as-new, and its progress. Pure, for the
 * workflow, its activities and the API alike.
 */

/** `recover-<subscriptionId>-<n>`: the n-th job of the subscription, numbered from 1. */
export function recoveryWorkflowId(subscriptionId: string, n: number): string {
  return `${recoveryIdPrefix(subscriptionId)}${n}`;
}

export function recoveryIdPrefix(subscriptionId: string): string {
  return `recover-${subscriptionId}-`;
}

/** The n of a job's workflow id, or undefined for an id that is no job of this subscription. */
export function recoveryNumberOf(subscriptionId: string, workflowId: string): number | undefined {
  return jobNumberAfter(recoveryIdPrefix(subscriptionId), workflowId);
}

/** Asks the job to start no further series (CancelRecovery); a cancel through Temporal does the same. */
export const cancelRecoverySignal = "cancelRecovery";
/** Answers the job's RecoveryState (GetRecovery), while it runs and after it has ended. */
export const recoveryProgressQuery = "recoveryProgress";

/** The failed deliveries a job sends again: one subscription's, created in an inclusive window (D37). */
export interface RecoveryScope {
  workspaceId: string;
  subscriptionId: string;
  since: number;
  until: number;
}

export interface RecoveryCounts {
  succeeded: number;
  failed: number;
  /**
   * At their last series (D40), no longer failed when the job reached them, or held when their endpoint
   * was held meanwhile (D36: its drain sends them).
   */
  skipped: number;
}

export interface RecoveryInput extends RecoveryScope {
  /** How many the job takes: the failed deliveries of the window at its start, at most the job limit. */
  total: number;
  /** More were failed in the window than the job takes. */
  capped: boolean;
  startedAt: number;
  /** Carried from the run before, when the job continued as new. */
  carried?: { counts: RecoveryCounts; after?: { createdAt: number; id: string } | undefined };
}

export type RecoveryStatus = "running" | "completed" | "cancelled" | "stopped";

/**
 * Why a job stopped before its end: its subscription can no longer be sent to, or it was ended in
 * Temporal itself (terminated, timed out) rather than through CancelRecovery.
 */
export type RecoveryStop = "subscription_disabled" | "subscription_deleted" | "ended_in_temporal";

/** What GetRecovery shows of a job; the workflow's result is its last state. */
export interface RecoveryState extends RecoveryScope, RecoveryCounts {
  status: RecoveryStatus;
  total: number;
  capped: boolean;
  startedAt: number;
  endedAt?: number;
  stoppedReason?: RecoveryStop;
}
