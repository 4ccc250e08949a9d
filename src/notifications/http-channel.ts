import { STATUS_CODES } from "node:http";
import { fetch, type Response } from "undici";
import { innermostMessage, retryAfterMs } from "../blocks/retry.js";
import { createOutboundDispatcher, outboundRefusalOf } from "../security/outbound.js";
import type { AlertFiredEvent } from "./alert-event.js";
import type { CompletionEvent } from "./event.js";
import { signWebhook } from "./signature.js";

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
  durationMs: number;
  retryAfterMs?: number;
}

export interface PostOptions {
  /** Extra headers; content-type is always application/json. */
  headers?: Record<string, string>;
  allowPrivateNetworks: boolean;
  timeoutMs?: number;
  now?: () => number;
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
  const startedAt = now();
  const finish = (result: Omit<AttemptResult, "durationMs">): AttemptResult => ({
    ...result,
    durationMs: now() - startedAt,
  });
  const problem = urlProblem(url);
  if (problem) return finish({ outcome: "failed", responseSnippet: "", error: `url ${problem}` });
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { ...options.headers, "content-type": "application/json" },
      body,
      redirect: "manual",
      signal: timeout,
      dispatcher: createOutboundDispatcher({ allowPrivateNetworks: options.allowPrivateNetworks }),
    });
    const responseSnippet = await snippetOf(response);
    return finish({ ...classify(response, now()), responseSnippet });
  } catch (error) {
    if (timeout.aborted) {
      return finish({
        outcome: "retry",
        responseSnippet: "",
        error: `no complete answer within ${timeoutMs} ms`,
      });
    }
    const refusal = outboundRefusalOf(error);
    if (refusal) return finish({ outcome: "failed", responseSnippet: "", error: refusal.message });
    return finish({
      outcome: "retry",
      responseSnippet: "",
      error: `connection failed: ${innermostMessage(error)}`,
    });
  }
}

export interface WebhookAttempt {
  url: string;
  /** Optional (spec "Authentication" 4): without it no service-signature header is sent. */
  secret?: string;
  /** Either event type (D21): the body is the event, whichever it is, and `service-event` names its type. */
  event: CompletionEvent | AlertFiredEvent;
  /** The delivery's id: service-delivery-id and Idempotency-Key, the same on every attempt (D19). */
  deliveryId: string;
  allowPrivateNetworks: boolean;
  timeoutMs?: number;
  now?: () => number;
}

/**
 * One webhook attempt (spec "Webhook request headers", D19). Signed here, at send time, with this attempt's
 * timestamp, so a retry minutes later still passes the receiver's 5-minute replay check.
 */
export function sendWebhookAttempt(attempt: WebhookAttempt): Promise<AttemptResult> {
  const now = attempt.now ?? Date.now;
  const body = JSON.stringify(attempt.event);
  const timestampMs = now();
  const headers: Record<string, string> = {
    "service-event": attempt.event.type,
    "service-timestamp": String(timestampMs),
    "service-delivery-id": attempt.deliveryId,
    "Idempotency-Key": attempt.deliveryId,
  };
  if (attempt.secret) headers["service-signature"] = signWebhook(attempt.secret, timestampMs, body);
  return postJson(attempt.url, body, {
    headers,
    allowPrivateNetworks: attempt.allowPrivateNetworks,
    timeoutMs: attempt.timeoutMs,
    now,
  });
}

/** Checked before sending: fetch would reject these with an error that looks like a network failure. */
function urlProblem(url: string): string | undefined {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed?.protocol !== "http:" && parsed?.protocol !== "https:")
    return "must be an absolute http or https URL";
  if (parsed.username || parsed.password) return "must not carry credentials";
  return undefined;
}

function classify(response: Response, nowMs: number): Omit<AttemptResult, "durationMs" | "responseSnippet"> {
  const { status } = response;
  if (status >= 200 && status < 300) return { outcome: "succeeded", httpStatus: status };
  const answered = `receiver answered ${status} ${STATUS_CODES[status] ?? ""}`.trim();
  if (status === 429 || status >= 500) {
    const wait = retryAfterMs(response.headers.get("retry-after"), nowMs);
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

/**
 * The first 1 KB of the body as text. The rest is not read, so a huge answer costs nothing; a multi-byte
 * character cut at the limit is dropped rather than shown as a replacement character.
 */
/** The first kilobyte of an answer as text, never ending in half a character (D19: the attempt log). */
export function snippetOfBytes(bytes: Uint8Array): string {
  const cut = bytes.subarray(0, responseSnippetBytes);
  return new TextDecoder().decode(cut, { stream: bytes.length > responseSnippetBytes });
}

async function snippetOf(response: Response): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  while (reader && size < responseSnippetBytes) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader?.cancel();
  return snippetOfBytes(Buffer.concat(chunks));
}
