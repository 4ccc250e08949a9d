import { Context } from "@temporalio/activity";
import { type Client, WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import { deliveryFailedEventType, receivesEventType } from "../../domain/event-types.js";
import { announcesFailure, buildDeliveryFailedEvent } from "../../notifications/delivery-failed-event.js";
import { newId } from "../../util/ids.js";
import {
  type DeliveryTarget,
  deliverySearchAttributes,
  deliveryTaskQueue,
  eventDeliveryWorkflowId,
  fanOutSearchAttributes,
} from "../delivery-ids.js";
// A type only: activities never load workflow code.
import type { deliverEvent } from "../workflows/index.js";
import { workspacePriority } from "../workspace-priority.js";
import type { DeliveryInput } from "./delivery-activities.js";
import type { ActivityDeps } from "./deps.js";

/**
 * D38's delivery.failed: a delivery's series ended failed (its schedule used up, a 4xx, its last attempt
 * lost), and the workspace's subscriptions that take the event are told. Their deliveries are made here,
 * once (the event's id follows from the delivery and series), and sent by a workflow of their own,
 * `notify-<eventId>`, so the series that failed, a fan-out or a recovery job, waits for none of them.
 */
export function deliveryFailedActivities(deps: ActivityDeps, temporal: Client) {
  return {
    /** How many subscriptions are told; none for a test send or a failed operational event. */
    async announceFailedDelivery(input: DeliveryInput): Promise<number> {
      const { store } = deps;
      const delivery = await store.deliveries.get(input.deliveryId);
      if (input.once || !delivery || !announcesFailure(delivery)) return 0;
      const attempts = (await store.deliveries.attemptsOf(delivery.id)).filter(
        (a) => a.series === input.series,
      );
      const event = buildDeliveryFailedEvent(delivery, input.series, attempts);
      const told = (await store.notifications.list(delivery.workspaceId)).filter(
        (subscription) => subscription.active && receivesEventType(subscription, deliveryFailedEventType),
      );
      if (told.length === 0) return 0;
      const targets: DeliveryTarget[] = await Promise.all(
        told.map(async (subscription) => {
          const made = await store.deliveries.createOnce({
            id: newId("dlv"),
            eventId: event.id,
            eventType: event.type,
            subscriptionId: subscription.id,
            workspaceId: delivery.workspaceId,
            logId: null,
            event,
            createdAt: event.timestamp,
          });
          return { deliveryId: made.id, workspaceId: delivery.workspaceId, subscriptionId: subscription.id };
        }),
      );
      await temporal.workflow
        .start<typeof deliverEvent>("deliverEvent", {
          workflowId: eventDeliveryWorkflowId(event.id),
          taskQueue: deliveryTaskQueue(Context.current().info.taskQueue),
          args: [{ targets }],
          workflowIdReusePolicy: "REJECT_DUPLICATE",
          typedSearchAttributes: [
            ...deliverySearchAttributes({
              workspaceId: delivery.workspaceId,
              subscriptionId: delivery.subscriptionId,
            }),
            ...fanOutSearchAttributes(targets),
          ],
          priority: workspacePriority(delivery.workspaceId),
        })
        .catch((error: unknown) => {
          // A retry of this activity after its start: the deliveries are already on their way.
          if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        });
      return targets.length;
    },
  };
}
