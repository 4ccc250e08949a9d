import { isoFromMs } from "../util/time.js";
import { endpointLabel } from "./endpoint-notice.js";

/**
 * D36, D38: the operational events about a webhook or chat endpoint: it is held (its deliveries wait),
 * released (a probe got through and what waited is being sent), or disabled (D35). They go to the
 * workspace's e-mail subscriptions and to the subscriptions whose eventTypes name them, never to the
 * endpoint they are about. One builder serves the delivery log, the webhook body, the e-mail and the chat
 * message.
 */
export const subscriptionHeldEventType = "subscription.held";
export const subscriptionReleasedEventType = "subscription.released";
export const subscriptionDisabledEventType = "subscription.disabled";

export type HoldNoticeType =
  | typeof subscriptionHeldEventType
  | typeof subscriptionReleasedEventType
  | typeof subscriptionDisabledEventType;

export interface HoldNoticeEvent {
  id: string;
  type: HoldNoticeType;
  /** Unix milliseconds, an integer, like every event's. */
  timestamp: number;
  data: {
    subscriptionId: string;
    channel: "webhook" | "slack";
    /** The endpoint as endpointLabel shows it: never credentials, never a chat URL's secret path. */
    endpoint: string;
    /** When the hold began; null for a disable that found none. */
    heldSince: string | null;
    /** How many deliveries wait (held), are about to be sent (released), or ended failed (disabled). */
    heldDeliveries: number;
    /** The last failure of the endpoint's run, as its attempt recorded it. */
    lastError: string | null;
  };
}

export interface HoldNotice {
  eventId: string;
  type: HoldNoticeType;
  atMs: number;
  subscriptionId: string;
  channel: "webhook" | "slack";
  url: string;
  heldAtMs: number | null;
  heldDeliveries: number;
  lastError: string | null;
}

export function buildHoldNotice(notice: HoldNotice): HoldNoticeEvent {
  return {
    id: notice.eventId,
    type: notice.type,
    timestamp: notice.atMs,
    data: {
      subscriptionId: notice.subscriptionId,
      channel: notice.channel,
      endpoint: endpointLabel(notice.channel, notice.url),
      heldSince: notice.heldAtMs === null ? null : isoFromMs(notice.heldAtMs),
      heldDeliveries: notice.heldDeliveries,
      lastError: notice.lastError,
    },
  };
}

/** Whether a stored event is one of these (a delivery's event is kept as plain JSON). */
export function isHoldNotice(event: unknown): event is HoldNoticeEvent {
  const type = (event as { type?: unknown } | null)?.type;
  return (
    type === subscriptionHeldEventType ||
    type === subscriptionReleasedEventType ||
    type === subscriptionDisabledEventType
  );
}

/** One line that says what happened, for an e-mail subject and a chat message's title. */
export function holdNoticeTitle(event: HoldNoticeEvent): string {
  const { endpoint, heldDeliveries } = event.data;
  switch (event.type) {
    case subscriptionHeldEventType:
      return `Endpoint held: ${endpoint} keeps failing; its deliveries wait (${heldDeliveries} held)`;
    case subscriptionReleasedEventType:
      return `Endpoint released: ${endpoint} answers again; ${heldDeliveries} held deliveries are being sent`;
    case subscriptionDisabledEventType:
      return `Endpoint disabled: ${endpoint}`;
  }
}

/** What the owner can do, in the e-mail and the chat message. */
export function holdNoticeAdvice(event: HoldNoticeEvent): string {
  switch (event.type) {
    case subscriptionHeldEventType:
      return "Nothing is lost: a probe tries the endpoint on a growing backoff, and the first success sends what waits, oldest first.";
    case subscriptionReleasedEventType:
      return "The held deliveries are sent oldest first at the endpoint's pace; new ones follow them.";
    case subscriptionDisabledEventType:
      return "Its held deliveries ended failed (subscription_disabled). Fix the endpoint, enable the subscription, then recover them.";
  }
}
