import { flowlogSearchAttributes } from "./search-attributes.js";

/**
 * How deliveries appear in the Temporal UI (issue 5, item 7): one workflow per attempt series of a
 * delivery, named after it, so operators find a delivery by the id a receiver saw in service-delivery-id.
 * Pure, for the workflows that start them and the API that redelivers alike. Starting a name twice is a
 * no-op, which is what makes the fan-out idempotent on (event, subscription) (D19).
 */
export function deliveryWorkflowId(deliveryId: string, series: number): string {
  return `delivery-${deliveryId}-${series}`;
}

/** The one fan-out of an execution's log entry; a replayed execution finds it already started. */
export function fanOutWorkflowId(logId: string): string {
  return `notify-${logId}`;
}

export interface DeliveryTarget {
  deliveryId: string;
  workspaceId: string;
  /** The workflow the event is about; absent for a test event. */
  workflowId?: string | undefined;
  subscriptionId: string;
}

/** Operators filter deliveries by subscription (and workspace, workflow) in the Temporal UI. */
export function deliverySearchAttributes(target: Omit<DeliveryTarget, "deliveryId">) {
  return [
    { key: flowlogSearchAttributes.workspaceId, value: target.workspaceId },
    { key: flowlogSearchAttributes.subscriptionId, value: target.subscriptionId },
    ...(target.workflowId === undefined
      ? []
      : [{ key: flowlogSearchAttributes.workflowId, value: target.workflowId }]),
  ];
}
