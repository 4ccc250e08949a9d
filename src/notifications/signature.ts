import { createHmac } from "node:crypto";

/**
 * The service-signature header value (spec "Authentication" 3, D19): `t=<ms>,v1=<hex>`, the lowercase hex
 * HMAC-SHA256 of `<t>.<body>` keyed with the subscription's secret. `body` must be the exact bytes sent,
 * `JSON.stringify(event)`, and `t` the service-timestamp of this attempt. During a rotation's grace period
 * (D33) `secrets` holds the new secret and the one it replaces, and the one header carries a `v1` for each,
 * newest first: `t=<ms>,v1=<new>,v1=<old>`, which receivers (and Stripe's libraries) accept on any match.
 */
export function signWebhook(secrets: readonly string[], timestampMs: number, body: string): string {
  const signed = `${timestampMs}.${body}`;
  const digests = secrets.map((secret) => createHmac("sha256", secret).update(signed, "utf8").digest("hex"));
  return [`t=${timestampMs}`, ...digests.map((digest) => `v1=${digest}`)].join(",");
}
