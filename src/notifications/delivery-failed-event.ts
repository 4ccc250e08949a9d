import { defaultEventTypes, deliveryFailedEventType } from "../domain/event-types.js";
import type { DeliveryAttemptRecord, DeliveryRecord } from "../store/delivery-rows.js";
import { derivedId } from "../util/ids.js";
import { isoFromMs } from "../util/time.js";

/**
 * What a delivery.failed event tells (D38): which delivery of which subscription failed, the event it
 * carried, and how its series ended. Never the endpoint's URL, a secret or a header value (D24): the
 * subscription id names the endpoint.
 */
export interface DeliveryFailedEvent {
  id: string;
  type: typeof deliveryFailedEventType;
  /** Unix milliseconds, an integer, like every event's: when the series ended. */
  timestamp: number;
  data: {
    deliveryId: string;
    subscriptionId: string;
    /** The event the failed delivery carried. */
    eventId: string;
    eventType: string;
    /** The series that failed: 1 for the first, one more for each redelivery (D19). */
    series: number;
    /** Attempts of that series. */
    attempts: number;
    /** The last attempt's HTTP status; null when it had no HTTP answer. */
    lastHttpStatus: number | null;
    lastError: string | null;
    failedAt: string;
  };
}

/**
 * Whether a failed delivery makes a delivery.failed event: only one that carried an event about
 * workflows (D38's defaults). An operational event's, or a D35 notice's, makes none, so a failing monitor
 * endpoint cannot feed itself events without end.
 */
export function announcesFailure(delivery: Pick<DeliveryRecord, "eventType">): boolean {
  return (defaultEventTypes as readonly string[]).includes(delivery.eventType);
}

/**
 * The one builder of the event, from the delivery and its failed series' attempts (the delivery's own
 * last status and error stand in when none was recorded). Its id follows from the delivery and the series, so every retry of the
 * activity that makes it makes the same event, and each subscription gets one delivery of it (D19).
 */
export function buildDeliveryFailedEvent(
  delivery: DeliveryRecord,
  series: number,
  attempts: readonly DeliveryAttemptRecord[],
): DeliveryFailedEvent {
  const last = attempts.at(-1);
  const failedAt = last ? last.startedAt + last.durationMs : delivery.updatedAt;
  return {
    id: derivedId("evt", `${deliveryFailedEventType}:${delivery.id}:${series}`),
    type: deliveryFailedEventType,
    timestamp: failedAt,
    data: {
      deliveryId: delivery.id,
      subscriptionId: delivery.subscriptionId,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      series,
      attempts: attempts.length,
      lastHttpStatus: last ? last.httpStatus : delivery.lastHttpStatus,
      lastError: last?.error ?? delivery.lastError,
      failedAt: isoFromMs(failedAt),
    },
  };
}

/** Whether a stored event is a delivery.failed (a delivery's event is kept as plain JSON). */
export function isDeliveryFailedEvent(event: unknown): event is DeliveryFailedEvent {
  return (event as { type?: unknown } | null)?.type === deliveryFailedEventType;
}

/** The event as one line, for a chat message's title and an e-mail's subject. */
export function deliveryFailedTitle(event: DeliveryFailedEvent): string {
  const { data } = event;
  const status = data.lastHttpStatus === null ? "" : ` (HTTP ${data.lastHttpStatus})`;
  return `Delivery failed: ${data.eventType} to subscription ${data.subscriptionId}${status}`;
}
