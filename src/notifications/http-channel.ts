import { STATUS_CODES } from "node:http";
import { Headers } from "undici";
import { exchange, type OutboundReply } from "../outbound/exchange.js";
import { OutboundFailure } from "../outbound/failure.js";
import { isRetryableStatus, retryAfterMs } from "../outbound/retry-policy.js";
import { parseOutboundUrl } from "../outbound/url-policy.js";
import type { SignatureScheme } from "../store/subscriptions-store.js";
import type { AlertFiredEvent, AlertResolvedEvent } from "./alert-event.js";
import type { DeliveryFailedEvent } from "./delivery-failed-event.js";
import type { CompletionEvent } from "./event.js";
import type { HoldNoticeEvent } from "./hold-notice.js";
import { signWebhook } from "./signature.js";
import { standardWebhookHeaders } from "./standard-webhooks.js";

/** D19 / spec "Other constants": one timeout for the whole exchange, response body included. */
export const deliveryTimeoutMs = 30_000;
/** D19: the attempt log keeps the first 1 KB of the response. */
export const responseSnippetBytes = 1024;

/**
 * One HTTP attempt as the delivery log records it (D19). `retry` and `failed` are for the orchestration:
 * only `retry` is tried again; `retryAfterMs` is the receiver's Retry-After, when it sent one.
 */
export interface AttemptResult {
  outcome: "succeeded" | "retry" | "failed";
  httpStatus?: number;
  responseSnippet: string;
  error?: string;
  retryAfterMs?: number;
}

export interface PostOptions {
  /** Extra headers; content-type is always application/json. */
  headers?: Record<string, string>;
  allowPrivateNetworks: boolean;
  /**
   * D26: how much of the receiver's answer is read. The answer is only a receipt whose first kilobyte the
   * attempt log keeps, so a longer one is cut there and the rest left unread: it never fails a delivery.
   */
  replyLimitBytes: number;
  timeoutMs?: number;
  now?: () => number;
  /** D50: send the current span's `traceparent` (with tracing on). */
  propagateTrace?: boolean | undefined;
}

/**
 * The HTTP plumbing every HTTP channel shares (webhook and chat, D19/D20): one POST, classified. Any 2xx
 * succeeds; 5xx, 429, timeouts and network errors are worth another attempt; everything else, redirects
 * included (never followed, D19), fails at once, and so does a target refused by D22. Neither the URL nor
 * the headers ever reach an error message: a chat URL is itself a credential and a signature derives from
 * the secret (D24).
 */
export async function postJson(url: string, body: string, options: PostOptions): Promise<AttemptResult> {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? deliveryTimeoutMs;
  const target = parseOutboundUrl(url);
  if (!(target instanceof URL)) {
    return { outcome: "failed", responseSnippet: "", error: `url ${target.problem}` };
  }
  const headers = new Headers({ ...options.headers, "content-type": "application/json" });
  try {
    const reply = await exchange(
      { method: "POST", url: target, headers, body },
      {
        allowPrivateNetworks: options.allowPrivateNetworks,
        timeoutMs,
        replyLimit: { bytes: options.replyLimitBytes, beyond: "cut" },
        propagateTrace: options.propagateTrace,
      },
    );
    return { ...classify(reply, now()), responseSnippet: snippetOfBytes(reply.body) };
  } catch (error) {
    if (!(error instanceof OutboundFailure)) throw error;
    const outcome = error.retryable ? "retry" : "failed";
    return { outcome, responseSnippet: "", error: error.message };
  }
}

export interface WebhookAttempt {
  url: string;
  /** Optional (spec "Authentication" 4): without it no service-signature header is sent. */
  secret?: string;
  /**
   * D33: the secret a rotation replaced, while its grace period lasts at this attempt: the header then
   * carries a second `v1`, made with it.
   */
  previousSecret?: string;
  /** D39: the spec's service-signature (the default), or Standard Webhooks' webhook-id, -timestamp and -signature. */
  signatureScheme?: SignatureScheme;
  /** D38: the subscription's own headers; the delivery's own (refused by the API) would win. */
  headers?: Readonly<Record<string, string>>;
  /** D50: the subscription sends the W3C trace context (`traceparent`) when tracing is on; off unless set. */
  propagateTraceContext?: boolean;
  /** Any event type (D21, D34): the body is the event, whichever it is, and `service-event` names its type. */
  event: CompletionEvent | AlertFiredEvent | AlertResolvedEvent | DeliveryFailedEvent | HoldNoticeEvent;
  /** The delivery's id: service-delivery-id and Idempotency-Key, the same on every attempt (D19). */
  deliveryId: string;
  allowPrivateNetworks: boolean;
  /** D26: quotas.replyBytes.delivery. */
  replyLimitBytes: number;
  timeoutMs?: number;
  now?: () => number;
}

/**
 * One webhook attempt (spec "Webhook request headers", D19). Signed here, at send time, with this attempt's
 * timestamp, so a retry minutes later still passes the receiver's 5-minute replay check. Either scheme
 * (D39) keeps the spec's unsigned headers, so receivers that route on service-event go on working.
 */
export function sendWebhookAttempt(attempt: WebhookAttempt): Promise<AttemptResult> {
  const now = attempt.now ?? Date.now;
  const body = JSON.stringify(attempt.event);
  const timestampMs = now();
  const secrets = [attempt.secret, attempt.previousSecret].filter((secret): secret is string =>
    Boolean(secret),
  );
  const headers: Record<string, string> = {
    ...attempt.headers,
    "service-event": attempt.event.type,
    "service-timestamp": String(timestampMs),
    "service-delivery-id": attempt.deliveryId,
    "Idempotency-Key": attempt.deliveryId,
    ...(attempt.signatureScheme === "standard"
      ? standardWebhookHeaders(secrets, attempt.deliveryId, timestampMs, body)
      : secrets.length > 0 && { "service-signature": signWebhook(secrets, timestampMs, body) }),
  };
  return postJson(attempt.url, body, {
    headers,
    allowPrivateNetworks: attempt.allowPrivateNetworks,
    replyLimitBytes: attempt.replyLimitBytes,
    timeoutMs: attempt.timeoutMs,
    now,
    propagateTrace: attempt.propagateTraceContext,
  });
}

function classify(
  reply: OutboundReply,
  nowMs: number,
): Omit<AttemptResult, "durationMs" | "responseSnippet"> {
  const { status } = reply;
  if (status >= 200 && status < 300) return { outcome: "succeeded", httpStatus: status };
  const answered = `receiver answered ${status} ${STATUS_CODES[status] ?? ""}`.trim();
  if (isRetryableStatus(status)) {
    const wait = retryAfterMs(reply.headers.get("retry-after"), nowMs);
    return {
      outcome: "retry",
      httpStatus: status,
      error: answered,
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
    };
  }
  const redirect = status >= 300 && status < 400 ? "; redirects are not followed" : "";
  return { outcome: "failed", httpStatus: status, error: `${answered}${redirect}` };
}

/** The first kilobyte of an answer as text, never ending in half a character (D19: the attempt log). */
export function snippetOfBytes(bytes: Uint8Array): string {
  const cut = bytes.subarray(0, responseSnippetBytes);
  return new TextDecoder().decode(cut, { stream: bytes.length > responseSnippetBytes });
}
