import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";

/**
 * The request's path and query, parsed once: every route of the one port (probes, metrics, the REST
 * gateway, the console) reads its answer's path from it, and a busy server parses each request's URL
 * only once (issue 13). Only the path and the query are meaningful: the host is a placeholder.
 */
export function requestUrl(req: Pick<IncomingMessage | Http2ServerRequest, "url">): URL {
  return new URL(req.url ?? "/", requestBase);
}

/** The placeholder origin request targets are read against; the server refuses a target it cannot read. */
export const requestBase = "http://request";
