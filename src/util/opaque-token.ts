/**
 * JSON carried as an opaque, URL-safe token: how every cursor is handed to clients (D8's log cursor,
 * D40's delivery log and attempts cursors). What the JSON must hold is checked by each cursor's own reader.
 */
export function encodeToken(json: object): string {
  return Buffer.from(JSON.stringify(json)).toString("base64url");
}

/** The JSON a token holds, or undefined for text that is no base64url of JSON. */
export function decodeToken(token: string): unknown {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  try {
    return JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}
