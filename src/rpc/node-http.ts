import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

/** A request on the one port, HTTP/1.1 or HTTP/2, as every route of it takes it (RPC, REST, probes). */
export type NodeRequest = IncomingMessage | Http2ServerRequest;

/** The answer to a `NodeRequest`. */
export type NodeResponse = ServerResponse | Http2ServerResponse;

/** The address of a request's client: its peer's, or whom a trusted proxy says it forwards for (D26). */
export type ClientAddress = (req: NodeRequest) => string;

/**
 * An answer given before the request's body was read (a refusal, D28) ends an HTTP/1.1 connection: kept
 * alive, Node would read the body to its end to reach the next request, up to the body timeout (D27),
 * which is the read D28 spares a stranger. HTTP/2 resets the stream's rest instead.
 */
export function closeIfBodyUnread(req: NodeRequest, res: NodeResponse): void {
  const bodyLeft =
    !req.readableEnded &&
    (Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined);
  if (req.httpVersionMajor === 1 && bodyLeft) res.setHeader("connection", "close");
}
