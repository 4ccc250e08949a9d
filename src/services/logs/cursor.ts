import type { Order, PageKey } from "../../store/log-list-sql.js";
import { decodeToken, encodeToken } from "../../util/opaque-token.js";

/**
 * D8: the cursor is opaque base64url JSON of the last row's key and the order it was read in, so a
 * cursor used with the other order is recognised and refused rather than silently skipping rows.
 */
interface CursorJson {
  s: number;
  i: string;
  o: Order;
}

export function encodeCursor(key: PageKey, order: Order): string {
  const json: CursorJson = { s: key.startedAt, i: key.id, o: order };
  return encodeToken(json);
}

export type DecodedCursor = { ok: true; key: PageKey; order: Order } | { ok: false };

export function decodeCursor(cursor: string): DecodedCursor {
  const json = (decodeToken(cursor) ?? {}) as Partial<CursorJson>;
  const valid =
    Number.isSafeInteger(json.s) && typeof json.i === "string" && (json.o === "asc" || json.o === "desc");
  return valid
    ? { ok: true, key: { startedAt: json.s as number, id: json.i as string }, order: json.o as Order }
    : { ok: false };
}
