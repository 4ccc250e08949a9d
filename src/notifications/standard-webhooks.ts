import { createHmac, randomBytes } from "node:crypto";

/**
 * Standard Webhooks (D39; standardwebhooks.com): the signature scheme a webhook subscription may choose
 * instead of the spec's service-signature, so receivers can verify with the scheme's published libraries.
 * A secret is `whsec_` and the base64 of the key bytes; the signed content is `<id>.<timestamp>.<body>`,
 * with the timestamp in Unix seconds; the header lists `v1,<base64 HMAC-SHA256>` once per secret,
 * separated by spaces.
 */

const secretPrefix = "whsec_";
/** The scheme's advice on key length, in bytes. */
const keyBytes = { min: 24, max: 64 } as const;

/** Why `secret` cannot sign with the standard scheme, as the end of a sentence naming the field; or undefined. */
export function standardSecretProblem(secret: string): string | undefined {
  const key = keyOf(secret);
  if (key === undefined)
    return "must be whsec_ followed by standard base64 for the standard signature scheme";
  if (key.length < keyBytes.min || key.length > keyBytes.max)
    return `must hold a key of ${keyBytes.min} to ${keyBytes.max} bytes after whsec_ (it holds ${key.length})`;
  return undefined;
}

/** A new standard secret: 32 random bytes, the length the scheme's libraries generate. */
export function newStandardSecret(): string {
  return `${secretPrefix}${randomBytes(32).toString("base64")}`;
}

/**
 * The three headers of one attempt: `secrets` newest first, none for an unsigned webhook. The API lets
 * only whsec_ secrets sign this way; any other (written to the store some other way) is keyed with its text.
 */
export function standardWebhookHeaders(
  secrets: readonly string[],
  deliveryId: string,
  timestampMs: number,
  body: string,
): Record<string, string> {
  const timestamp = String(Math.floor(timestampMs / 1000));
  const signed = `${deliveryId}.${timestamp}.${body}`;
  const signatures = secrets.map(
    (secret) =>
      `v1,${createHmac("sha256", keyOf(secret) ?? secret)
        .update(signed, "utf8")
        .digest("base64")}`,
  );
  return {
    "webhook-id": deliveryId,
    "webhook-timestamp": timestamp,
    ...(signatures.length > 0 && { "webhook-signature": signatures.join(" ") }),
  };
}

/** The key bytes of a `whsec_<base64>` secret; undefined when it is not one (strict, padded base64). */
function keyOf(secret: string): Buffer | undefined {
  if (!secret.startsWith(secretPrefix)) return undefined;
  const encoded = secret.slice(secretPrefix.length);
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(encoded)) return undefined;
  const key = Buffer.from(encoded, "base64");
  return key.length > 0 ? key : undefined;
}
