/**
 * One Temporal workflow per execution, found in the UI by this id (issue 4, item 2). Pure: the client
 * names workflows with it and the workflow reads its executionId back from it.
 */
const prefix = "execution-";

export function executionWorkflowId(executionId: string): string {
  return `${prefix}${executionId}`;
}

export function executionIdOf(workflowId: string): string {
  return workflowId.startsWith(prefix) ? workflowId.slice(prefix.length) : workflowId;
}

/**
 * D47: CancelExecution signals the reason, if any, then asks Temporal to cancel; the execution logs it
 * beside `cancelled` as it ends. A signal, because Temporal's cancellation carries no reason to workflow code.
 */
export const cancelReasonSignal = "cancelReason";
