import { flowlogSearchAttributes } from "./search-attributes.js";

/**
 * How deliveries appear in Temporal (issue 12, D19 as amended): an execution's deliveries are activities of
 * its fan-out workflow, `notify-<logId>`, one per subscription with the delivery id as activity id; the
 * fan-out carries the subscription and delivery ids as search attributes, so operators find a delivery by
 * the id a receiver saw in service-delivery-id. A redelivery or a test send is a workflow of its own. Pure,
 * for the workflows that start them and the API alike. Starting a name twice is a no-op, which is what makes
 * each idempotent (D19).
 */
export function redeliveryWorkflowId(deliveryId: string, series: number): string {
  return `redeliver-${deliveryId}-${series}`;
}

/** The Test RPC's single attempt (D18). */
export function testDeliveryWorkflowId(deliveryId: string): string {
  return `test-${deliveryId}`;
}

/** The one fan-out of an execution's log entry; a replayed execution finds it already started. */
export function fanOutWorkflowId(logId: string): string {
  return `notify-${logId}`;
}

/** The deliveries of an operational event (D38), such as delivery.failed: one workflow per event. */
export function eventDeliveryWorkflowId(eventId: string): string {
  return `notify-${eventId}`;
}

const deliveryQueueSuffix = "-deliveries";

/**
 * Deliveries run on a task queue of their own (D19: never in an execution's path), with its own slots
 * and pace, polled by the workers with the deliveries role (issue 51): by the same process as executions,
 * or by processes of their own. Named from the executions' queue; a delivery queue's is itself, so code
 * that may already run on it (a watcher) names the same queue either way.
 */
export function deliveryTaskQueue(taskQueue: string): string {
  return taskQueue.endsWith(deliveryQueueSuffix) ? taskQueue : `${taskQueue}${deliveryQueueSuffix}`;
}

export interface DeliveryTarget {
  deliveryId: string;
  workspaceId: string;
  /** The workflow the event is about; absent for a test event. */
  workflowId?: string | undefined;
  subscriptionId: string;
}

/**
 * Operators filter a redelivery, a test send or a no-activity watcher by subscription (and workspace,
 * workflow, delivery) in the Temporal UI.
 */
export function deliverySearchAttributes(
  target: Omit<DeliveryTarget, "deliveryId"> & { deliveryId?: string },
) {
  return [
    { key: flowlogSearchAttributes.workspaceId, value: target.workspaceId },
    { key: flowlogSearchAttributes.subscriptionId, value: target.subscriptionId },
    ...(target.deliveryId === undefined
      ? []
      : [{ key: flowlogSearchAttributes.deliveryIds, value: [target.deliveryId] }]),
    ...(target.workflowId === undefined
      ? []
      : [{ key: flowlogSearchAttributes.workflowId, value: target.workflowId }]),
  ];
}

/** The fan-out's: every subscription it notifies and every delivery it makes. */
export function fanOutSearchAttributes(targets: readonly DeliveryTarget[]) {
  return [
    {
      key: flowlogSearchAttributes.subscriptionIds,
      value: [...new Set(targets.map((t) => t.subscriptionId))],
    },
    { key: flowlogSearchAttributes.deliveryIds, value: targets.map((t) => t.deliveryId) },
  ];
}

/** D36: an attempt series stopped before its attempt because its endpoint is held; the drain sends it. */
export const deliveryHeldFailure = "DeliveryHeld";
