/** One no-activity watcher per (subscription, workflow of its selection) (D21). */
export interface InactivityWatch {
  subscriptionId: string;
  workflowId: string;
  /** When watching began: the silence of a workflow that never ran is counted from here. */
  sinceMs: number;
}

/** Fixed, so starting a watcher again finds the running one instead of adding a second (idempotent ensure). */
export function inactivityWatchId(subscriptionId: string, workflowId: string): string {
  return `inactivity-${subscriptionId}-${workflowId}`;
}

/** Wakes a sleeping watcher to re-read its rule: the subscription changed (a new X, a re-enable). */
export const recheckInactivitySignal = "recheckInactivity";
