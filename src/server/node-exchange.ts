import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { Code, ConnectError, type ContextValues } from "@connectrpc/connect";
import type { UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";
import type { NodeRequest, NodeResponse } from "../gateway/rest-gateway.js";

/**
 * A Node request as Connect's handlers take it, and their answer written back: what connect-node's
 * `universalRequestFromNodeRequest` and `universalResponseToNodeResponse` do, with two costs fewer on
 * every call (issue 13). The call's signal is aborted only when the client leaves before the answer is
 * written, as the REST gateway's is: connect-node aborts it when every HTTP/2 stream closes, without a
 * reason, which builds a `DOMException` per call. And a chunk is written without a promise and two
 * listeners around it; only a full socket buffer is waited for.
 */
export function universalRequestOf(
  req: NodeRequest,
  res: NodeResponse,
  contextValues: ContextValues,
): UniversalServerRequest {
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort(clientLeft);
  });
  const authority = "authority" in req ? req.authority : req.headers.host;
  return {
    httpVersion: req.httpVersion,
    method: req.method ?? "",
    url: new URL(req.url ?? "", `http://${authority ?? "localhost"}`).toString(),
    header: webHeadersOf(req.headers),
    body: req as AsyncIterable<Uint8Array>,
    signal: abort.signal,
    contextValues,
  };
}

const clientLeft = new ConnectError("the client left before the answer was written", Code.Aborted);

/**
 * Writes the handler's answer: its headers once the first chunk is read (the implementation may still
 * set some until then), each chunk as it comes, then its trailers. Rejects with `aborted` when the client
 * leaves first.
 */
export async function writeUniversalResponse(
  answer: UniversalServerResponse,
  res: NodeResponse,
): Promise<void> {
  const chunks = answer.body?.[Symbol.asyncIterator]();
  let closed = false;
  let wake = () => {};
  const onClose = () => {
    closed = true;
    wake();
  };
  res.once("close", onClose);
  try {
    let chunk = await chunks?.next();
    if (closed) throw clientLeft;
    res.writeHead(answer.status, nodeHeadersOf(answer.header));
    for (; chunk !== undefined && chunk.done !== true; chunk = await chunks?.next()) {
      if (closed) throw clientLeft;
      if (res.write(chunk.value)) continue;
      // A full socket buffer: wait for it to drain, or for the client to leave.
      let onDrain = () => {};
      await new Promise<void>((resolve) => {
        wake = onDrain = resolve;
        res.once("drain", onDrain);
      });
      res.off("drain", onDrain);
      if (closed) throw clientLeft;
    }
    if (answer.trailer) res.addTrailers(nodeHeadersOf(answer.trailer) ?? {});
    res.end();
  } catch (error) {
    await chunks?.return?.();
    res.destroy();
    throw error;
  } finally {
    res.off("close", onClose);
  }
}

/** Node's request headers as fetch's, HTTP/2 pseudo-headers left out. */
function webHeadersOf(headers: IncomingHttpHeaders): Headers {
  const header = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith(":")) continue;
    if (Array.isArray(value)) for (const item of value) header.append(name, item);
    else header.append(name, value);
  }
  return header;
}

function nodeHeadersOf(headers: Headers | undefined): OutgoingHttpHeaders | undefined {
  if (headers === undefined) return undefined;
  const node: OutgoingHttpHeaders = {};
  for (const [name, value] of headers) node[name] = value;
  return node;
}
