import { outboundRefusalOf } from "./address-guard.js";

/**
 * Why an outbound exchange got no usable answer. `timeout` and `unreachable` may go away on another
 * attempt; the others would only happen again. Messages never hold the URL or a header: a chat URL is itself
 * a credential and headers carry `{{secrets}}` (D24).
 */
export type OutboundFailureKind =
  | "timeout"
  | "unreachable"
  | "refused"
  | "reply_too_large"
  | "redirect_refused";

export class OutboundFailure extends Error {
  constructor(
    readonly kind: OutboundFailureKind,
    message: string,
  ) {
    super(message);
    this.name = "OutboundFailure";
  }

  get retryable(): boolean {
    return this.kind === "timeout" || this.kind === "unreachable";
  }
}

/** What a failed fetch comes to; `timedOut` is whether the exchange's own deadline had passed. */
export function outboundFailureOf(error: unknown, timedOut: boolean, timeoutMs: number): OutboundFailure {
  if (error instanceof OutboundFailure) return error;
  if (timedOut) return new OutboundFailure("timeout", `no complete answer within ${timeoutMs} ms`);
  const refusal = outboundRefusalOf(error);
  if (refusal) return new OutboundFailure("refused", refusal.message);
  return new OutboundFailure("unreachable", `connection failed: ${innermostMessage(error)}`);
}

/** undici wraps socket errors in "fetch failed"; the innermost cause says what happened. */
function innermostMessage(error: unknown): string {
  let cause = error;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  if (!(cause instanceof Error)) return String(cause);
  return cause.message || (cause as NodeJS.ErrnoException).code || cause.name;
}
