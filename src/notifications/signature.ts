import { createHmac } from "node:crypto";

/**
 * The service-signature header value (spec "Authentication" 3, D19): `t=<ms>,v1=<hex>`, the lowercase hex
 * HMAC-SHA256 of `<t>.<body>` keyed with the subscription's secret. `body` must be the exact bytes sent,
 * `JSON.stringify(event)`, and `t` the service-timestamp of this attempt.
 */
export function signWebhook(secret: string, timestampMs: number, body: string): string {
  const digest = createHmac("sha256", secret).update(`${timestampMs}.${body}`, "utf8").digest("hex");
  return `t=${timestampMs},v1=${digest}`;
}
