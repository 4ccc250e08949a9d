/**
 * A webhook's own headers (D38), and the names it may not use: those a delivery sets itself (the spec's
 * service-* headers, Standard Webhooks' webhook-* ones, D39, and the body's) and those of the HTTP
 * connection, which the client owns. The attempt sends the subscription's headers first and its own over
 * them (http-channel.ts), but a refused name never gets that far: the API turns it away.
 */
const reservedPrefixes = ["service-", "webhook-"];
const deliveryHeaders = new Set(["idempotency-key", "content-type", "content-length", "host", "user-agent"]);
const connectionHeaders = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
]);

/** Why a webhook may not set the header `name` (lower case), or undefined when it may. */
export function reservedHeaderProblem(name: string): string | undefined {
  if (reservedPrefixes.some((prefix) => name.startsWith(prefix)) || deliveryHeaders.has(name))
    return `${name} is set by the delivery itself`;
  if (connectionHeaders.has(name)) return `${name} belongs to the HTTP connection`;
  return undefined;
}
