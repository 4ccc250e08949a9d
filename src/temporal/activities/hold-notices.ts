import { receivesEventType } from "../../domain/event-types.js";
import { logger } from "../../logging/logger.js";
import {
  buildHoldNotice,
  type HoldNoticeType,
  subscriptionDisabledEventType,
} from "../../notifications/hold-notice.js";
import type { HoldStatus } from "../../store/hold-rows.js";
import { derivedId, newId } from "../../util/ids.js";
import type { DeliveryTarget } from "../delivery-ids.js";
import type { ActivityDeps } from "./deps.js";

/** The operator's line of each; a disable has D35's own (endpoint-health-activities.ts). */
const messages: Partial<Record<HoldNoticeType, string>> = {
  "subscription.held": "the endpoint keeps failing: its deliveries are held",
  "subscription.released": "the held endpoint answered: its held deliveries are being sent",
};

/**
 * Tells the workspace of a hold, a release or a disable (D36, D38): its e-mail subscriptions hear of a
 * hold and a release (D35's own notice tells them of a disable), and every subscription whose eventTypes
 * name the event gets it; never the subscription it is about. The event id follows from the hold (or the
 * failure run) and the kind, so telling again makes no second delivery. Answers the deliveries not
 * attempted yet, for the watcher to send; the operator log gets a line of a hold and a release.
 */
export async function tellWorkspace(
  deps: ActivityDeps,
  status: HoldStatus,
  type: HoldNoticeType,
  heldDeliveries: number,
): Promise<DeliveryTarget[]> {
  const { store } = deps;
  if (status.channel === "email") return [];
  const since = status.heldAt ?? status.failingSince ?? 0;
  const event = buildHoldNotice({
    eventId: derivedId("evt", `${type}:${status.subscriptionId}:${since}`),
    type,
    atMs: (deps.clock ?? Date.now)(),
    subscriptionId: status.subscriptionId,
    channel: status.channel,
    url: status.url,
    heldAtMs: status.heldAt,
    heldDeliveries,
    lastError: status.lastFailure,
  });
  const told = (await store.notifications.list(status.workspaceId)).filter(
    (subscription) =>
      subscription.active &&
      subscription.id !== status.subscriptionId &&
      (receivesEventType(subscription, type) ||
        (subscription.config.channel === "email" && type !== subscriptionDisabledEventType)),
  );
  const targets: DeliveryTarget[] = [];
  for (const subscription of told) {
    const delivery = await store.deliveries.createOnce({
      id: newId("dlv"),
      eventId: event.id,
      eventType: event.type,
      subscriptionId: subscription.id,
      workspaceId: status.workspaceId,
      logId: null,
      event,
      createdAt: event.timestamp,
    });
    if (delivery.status === "pending" && delivery.attempts === 0) {
      targets.push({
        deliveryId: delivery.id,
        workspaceId: status.workspaceId,
        subscriptionId: subscription.id,
      });
    }
  }
  const message = messages[type];
  if (message) {
    (deps.logger ?? logger)
      .child({ component: "hold" })
      .warn({ event: type, workspaceId: status.workspaceId, ...event.data }, message);
  }
  return targets;
}
