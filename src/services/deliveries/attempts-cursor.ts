import type { AttemptKey } from "../../store/delivery-rows.js";
import { decodeToken, encodeToken } from "../../util/opaque-token.js";

/**
 * D40: the cursor of a page of a delivery's attempts is opaque base64url JSON of the oldest attempt it
 * listed and the delivery it belongs to, as D8's cursor is for log entries: a cursor handed to another
 * delivery is recognised and refused rather than silently reading that delivery from the middle.
 */
interface CursorJson {
  d: string;
  s: number;
  a: number;
}

export function encodeAttemptsCursor(deliveryId: string, oldest: AttemptKey): string {
  const json: CursorJson = { d: deliveryId, s: oldest.series, a: oldest.attempt };
  return encodeToken(json);
}

export type DecodedAttemptsCursor = { ok: true; deliveryId: string; before: AttemptKey } | { ok: false };

export function decodeAttemptsCursor(cursor: string): DecodedAttemptsCursor {
  const { d, s, a } = (decodeToken(cursor) ?? {}) as Partial<CursorJson>;
  const valid = typeof d === "string" && isInt32(s) && isInt32(a);
  return valid ? { ok: true, deliveryId: d, before: { series: s, attempt: a } } : { ok: false };
}

/** Series and attempt numbers are int32 in the API and integer columns in PostgreSQL. */
function isInt32(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 2 ** 31 - 1;
}
