/**
 * Verifying a flowlog webhook signed the service's own way (the default `signatureScheme`), for receivers.
 * The same check as flowlog's src/notifications/verify-webhook.ts, which receivers without this package
 * copy; a webhook with `signatureScheme: "standard"` is verified with the `standardwebhooks` package (D39).
 *
 * Spec "Authentication" 3 and D19: service-signature is `t=<ms>,v1=<hex>`, the lowercase hex HMAC-SHA256 of
 * `<t>.<body>` keyed with the subscription's secret, where t equals service-timestamp. The body is compact
 * `JSON.stringify(event)`, so the raw body and `JSON.stringify(JSON.parse(rawBody))` are the same bytes and
 * either may be passed here. Answer 401 when this returns false (spec "Errors" 2).
 *
 * D33: while a rotated secret is in its grace period the header carries one `v1` per secret,
 * `t=<ms>,v1=<new>,v1=<old>`; it verifies when any of them matches, so a receiver holding either secret
 * keeps accepting deliveries while it switches.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  secret: string;
  /** The request body as received, or the parsed body serialised again with JSON.stringify. */
  body: string;
  /** Node's req.headers or a fetch Headers object. */
  headers: WebhookHeaders;
  /** Replay window: deliveries signed longer ago (or further ahead) than this are rejected. 5 minutes. */
  toleranceMs?: number;
  now?: () => number;
}

export function verifyWebhook(options: VerifyWebhookOptions): boolean {
  const { secret, body, headers, toleranceMs = 300_000, now = Date.now } = options;
  const signature = parseSignature(header(headers, "service-signature"));
  const timestamp = header(headers, "service-timestamp");
  if (!signature || timestamp !== signature.t) return false;
  if (Math.abs(now() - Number(timestamp)) > toleranceMs) return false;
  const expected = createHmac("sha256", secret).update(`${signature.t}.${body}`, "utf8").digest();
  // Every candidate is compared, so the time taken does not tell which one matched.
  const matches = signature.v1.map((v1) => timingSafeEqual(Buffer.from(v1, "hex"), expected));
  return matches.includes(true);
}

/** Exactly `t=<digits>` and one or more `,v1=<64 lowercase hex>`; a malformed header is no signature. */
function parseSignature(value: string | undefined): { t: string; v1: string[] } | undefined {
  const text = value?.trim() ?? "";
  const t = /^t=(\d+)((?:,v1=[0-9a-f]{64})+)$/.exec(text);
  if (!t?.[1] || !t[2]) return undefined;
  return { t: t[1], v1: t[2].split(",v1=").slice(1) };
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if ("get" in headers && typeof headers.get === "function") return headers.get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}
