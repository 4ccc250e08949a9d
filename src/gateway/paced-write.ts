import { once } from "node:events";
import type { NodeResponse } from "../rpc/node-http.js";

/**
 * Writes `text` to either kind of Node response and, when the socket's buffer is full, waits for it to
 * drain or for the client to leave (`closed`): a slow client holds a stream back, where its bounds
 * apply (D44, D45), instead of Node buffering without end.
 */
export async function writePaced(res: NodeResponse, text: string, closed: Promise<void>): Promise<void> {
  const flushed = (res as { write(chunk: string): boolean }).write(text);
  if (!flushed && !res.destroyed) await Promise.race([once(res, "drain"), closed]);
}
