import { timingSafeEqual } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { sha256 } from "../../util/sha256.js";

/**
 * The admin API answers operators, not users (issue 3, item 2): `Authorization: Bearer <token>` must
 * carry FLOWLOG_OPERATOR_TOKEN. With no token configured the admin API is off, so a deployment never
 * exposes account management by leaving a variable unset.
 */
export function checkOperatorToken(authorization: string | null, configured: string | undefined): void {
  if (configured === undefined) {
    throw new ConnectError("the admin API is disabled: set FLOWLOG_OPERATOR_TOKEN", Code.PermissionDenied);
  }
  const presented = bearerToken(authorization);
  if (presented === undefined || !sameSecret(presented, configured)) {
    throw new ConnectError(
      "missing or invalid operator token (send Authorization: Bearer <token>)",
      Code.Unauthenticated,
    );
  }
}

/** Whether `authorization` carries the configured operator token; never, while none is configured. */
export function isOperatorToken(
  authorization: string | null | undefined,
  configured: string | undefined,
): boolean {
  const presented = bearerToken(authorization ?? null);
  return configured !== undefined && presented !== undefined && sameSecret(presented, configured);
}

function bearerToken(authorization: string | null): string | undefined {
  return /^Bearer +(\S+) *$/i.exec(authorization ?? "")?.[1];
}

/**
 * Comparing digests gives timingSafeEqual equal lengths, so neither the token's characters nor its
 * length leak through the time a refusal takes.
 */
function sameSecret(presented: string, configured: string): boolean {
  return timingSafeEqual(sha256(presented), sha256(configured));
}
