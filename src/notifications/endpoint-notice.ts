import { isoFromMs } from "../util/time.js";

/**
 * D35: a webhook or chat endpoint that has failed for days is disabled, and the workspace's e-mail
 * subscriptions hear of it a notice period before and when it happens. These events go to e-mail only:
 * the endpoint they are about is the one that is not answering.
 */
export const endpointFailingEventType = "notification.endpoint.failing";
export const endpointDisabledEventType = "notification.endpoint.disabled";

export interface EndpointNoticeEvent {
  id: string;
  type: typeof endpointFailingEventType | typeof endpointDisabledEventType;
  /** Unix milliseconds, an integer, like every event's. */
  timestamp: number;
  data: {
    subscriptionId: string;
    channel: "webhook" | "slack";
    /** The endpoint as endpointLabel shows it: never credentials, never a chat URL's secret path. */
    endpoint: string;
    failingSince: string;
    failedDeliveries: number;
    lastError: string | null;
    /** When it will be disabled (failing), or was (disabled). */
    disabledAt: string;
  };
}

export interface EndpointNotice {
  eventId: string;
  type: EndpointNoticeEvent["type"];
  atMs: number;
  subscriptionId: string;
  channel: "webhook" | "slack";
  url: string;
  failingSinceMs: number;
  failedDeliveries: number;
  lastError: string | null;
  disabledAtMs: number;
}

/** The one builder of a D35 notice, for the e-mail and the delivery log alike. */
export function buildEndpointNotice(notice: EndpointNotice): EndpointNoticeEvent {
  return {
    id: notice.eventId,
    type: notice.type,
    timestamp: notice.atMs,
    data: {
      subscriptionId: notice.subscriptionId,
      channel: notice.channel,
      endpoint: endpointLabel(notice.channel, notice.url),
      failingSince: isoFromMs(notice.failingSinceMs),
      failedDeliveries: notice.failedDeliveries,
      lastError: notice.lastError,
      disabledAt: isoFromMs(notice.disabledAtMs),
    },
  };
}

/** Whether a stored event is one of D35's notices (a delivery's event is kept as plain JSON). */
export function isEndpointNotice(event: unknown): event is EndpointNoticeEvent {
  const type = (event as { type?: unknown } | null)?.type;
  return type === endpointFailingEventType || type === endpointDisabledEventType;
}

/**
 * How notices and the operator log name an endpoint (D24: no secrets). A webhook shows its scheme, host
 * and path, without user:password, query or fragment, where tokens tend to sit; a chat incoming-webhook
 * URL's path is its credential, so only its host shows.
 */
export function endpointLabel(channel: "webhook" | "slack", url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `a ${channel} endpoint with an invalid URL`;
  }
  const origin = `${parsed.protocol}//${parsed.host}`;
  return channel === "slack" ? `${origin}/… (chat incoming webhook)` : `${origin}${parsed.pathname}`;
}
