import { Code, ConnectError } from "@connectrpc/connect";

/**
 * A refusal that is a failed authentication, whatever code it answers with: the inbound webhook answers a
 * wrong token with `not_found`, as it answers a workflow that has none (D15), yet each wrong token counts
 * against the caller's address like a wrong key (D26).
 */
export class FailedAuthentication extends ConnectError {
  /** ConnectError's own instanceof test accepts any ConnectError; this class means only its own instances. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(FailedAuthentication, value);
  }
}

export function isFailedAuthentication(error: ConnectError): boolean {
  return error instanceof FailedAuthentication || error.code === Code.Unauthenticated;
}
