import type { LogFilter } from "../../store/log-list-sql.js";
import type { TailPosition } from "../../store/log-tail-sql.js";
import { decodeToken, encodeToken } from "../../util/opaque-token.js";
import { sha256 } from "../../util/sha256.js";

/**
 * D44's resume token: opaque base64url JSON, as D8's cursor, of a position in write order and the
 * filter it was issued for, so a token is refused rather than followed with another workspace or other
 * filters (whose entries it says nothing about).
 */
interface TokenJson {
  x: string;
  s: number;
  f: string;
}

/** What a token is bound to: the workspace and the filters, by a digest of their values. */
export function filterBinding(filter: LogFilter): string {
  return sha256(JSON.stringify(filter)).subarray(0, 12).toString("base64url");
}

export function encodeResumeToken(position: TailPosition, binding: string): string {
  const json: TokenJson = { x: position.xid, s: position.seq, f: binding };
  return encodeToken(json);
}

export type DecodedResumeToken = { ok: true; position: TailPosition; binding: string } | { ok: false };

export function decodeResumeToken(token: string): DecodedResumeToken {
  const json = (decodeToken(token) ?? {}) as Partial<TokenJson>;
  const valid =
    typeof json.x === "string" &&
    /^[0-9]{1,20}$/.test(json.x) &&
    Number.isSafeInteger(json.s) &&
    (json.s as number) >= 0 &&
    typeof json.f === "string";
  return valid
    ? { ok: true, position: { xid: json.x as string, seq: json.s as number }, binding: json.f as string }
    : { ok: false };
}
