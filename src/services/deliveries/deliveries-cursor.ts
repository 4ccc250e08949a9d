import type { DeliveryKey } from "../../store/delivery-rows.js";
import { decodeToken, encodeToken } from "../../util/opaque-token.js";

/**
 * D40: the cursor of a page of the delivery log is opaque base64url JSON of the last delivery it listed,
 * as D8's is for log entries; the next page holds the deliveries after it, newest first.
 */
interface CursorJson {
  c: number;
  i: string;
}

export function encodeDeliveriesCursor(last: DeliveryKey): string {
  const json: CursorJson = { c: last.createdAt, i: last.id };
  return encodeToken(json);
}

/** The key a cursor holds, or undefined for text that is no cursor of the delivery log. */
export function decodeDeliveriesCursor(cursor: string): DeliveryKey | undefined {
  const { c, i } = (decodeToken(cursor) ?? {}) as Partial<CursorJson>;
  return Number.isSafeInteger(c) && typeof i === "string" ? { createdAt: c as number, id: i } : undefined;
}
