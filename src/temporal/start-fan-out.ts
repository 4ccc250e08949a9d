import { type Client, WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import { type DeliveryTarget, fanOutSearchAttributes, fanOutWorkflowId } from "./delivery-ids.js";
import { flowlogSearchAttributes } from "./search-attributes.js";
import type { FanOutInput, fanOutNotifications } from "./workflows/deliver-notifications.js";
import { workspacePriority } from "./workspace-priority.js";

export interface FanOutStart {
  logId: string;
  workspaceId: string;
  workflowId: string;
  taskQueue: string;
  /** The entry's deliveries, already made (fan-out-outbox.ts); at least one. */
  targets: DeliveryTarget[];
  /** D50: the execution span's trace context (the outbox intent's), for the delivery attempts. */
  traceparent?: string | null;
  tracestate?: string | null;
}

/**
 * Starts the notifications of one log entry (issue 5, item 3) as a workflow of its own. Its id names the
 * log entry and a second start is refused, so a retried log write, or an execution replayed past it,
 * starts it once and deliveries are made once (D19). The deliveries come as its input and their ids as
 * its search attributes from the start (issue 12), so operators find them in the Temporal UI at once.
 */
export async function startFanOut(client: Client, start: FanOutStart): Promise<void> {
  try {
    await client.workflow.start<typeof fanOutNotifications>("fanOutNotifications", {
      workflowId: fanOutWorkflowId(start.logId),
      taskQueue: start.taskQueue,
      args: [{ logId: start.logId, targets: start.targets, ...traceContextOf(start) }],
      workflowIdReusePolicy: "REJECT_DUPLICATE",
      // On the worker's own connection (worker.ts), its first task can come straight back to this process.
      requestEagerStart: true,
      // One workspace's flood of notified executions must not queue another's deliveries behind it (D26).
      priority: workspacePriority(start.workspaceId),
      typedSearchAttributes: [
        { key: flowlogSearchAttributes.workspaceId, value: start.workspaceId },
        { key: flowlogSearchAttributes.workflowId, value: start.workflowId },
        ...fanOutSearchAttributes(start.targets),
      ],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

function traceContextOf({ traceparent, tracestate }: FanOutStart): Pick<FanOutInput, "traceContext"> {
  if (!traceparent) return {};
  return { traceContext: { traceparent, ...(tracestate ? { tracestate } : {}) } };
}
