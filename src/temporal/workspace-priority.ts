import type { Priority } from "@temporalio/common";

/**
 * Each workspace is its own fairness key (issue 11, D26): the task queues dispatch the workflow and
 * activity tasks of busy workspaces in turn rather than first come, first served, so a burst of one
 * tenant's work does not queue another's behind it. Every workflow flowlog starts for a workspace carries
 * it (executions, notification fan-outs, redeliveries and test sends); its activities inherit it.
 */
export function workspacePriority(workspaceId: string): Priority {
  return { fairnessKey: workspaceId };
}
