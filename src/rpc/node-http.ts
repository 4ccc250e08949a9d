import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Readable } from "node:stream";

/** A request on the one port, HTTP/1.1 or HTTP/2, as every route of it takes it (RPC, REST, probes). */
export type NodeRequest = IncomingMessage | Http2ServerRequest;

/** The answer to a `NodeRequest`. */
export type NodeResponse = ServerResponse | Http2ServerResponse;

/** The address of a request's client: its peer's, or whom a trusted proxy says it forwards for (D26). */
export type ClientAddress = (req: NodeRequest) => string;

/**
 * An answer given before the request's body was all read (a refusal, D28; a body over D26's limit, whose
 * reading stopped there) ends an HTTP/1.1 connection: kept alive, Node would read the body to its end to
 * reach the next request, up to the body timeout (D27), which is the read D28 spares a stranger. The close
 * lingers (one-port.ts), so that a client still sending is not reset before it read the answer. On HTTP/2
 * the answer ends the stream on the server's side; flow control holds the client's rest, and D27's body
 * deadline closes the stream if the client does not.
 */
export function closeIfBodyUnread(req: NodeRequest, res: NodeResponse): void {
  const bodyLeft =
    !req.readableEnded &&
    (Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined);
  if (req.httpVersionMajor === 1 && bodyLeft) res.setHeader("connection", "close");
}

/**
 * A request's body for a reader that may stop before its end (a body over the limit). Iterating the request
 * itself would destroy it when the reader stops, and a destroyed request no longer tells when the rest of
 * its body has arrived, which an HTTP/1.1 lingering close waits for (one-port.ts).
 */
export function bodyOf(req: NodeRequest): AsyncIterable<Buffer> {
  return { [Symbol.asyncIterator]: () => (req as Readable).iterator({ destroyOnReturn: false }) };
}
