import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import type { ServerHttp2Stream } from "node:http2";
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

/**
 * An HTTP/2 stream's request as Connect's handlers take it, read from the stream itself rather than
 * through Node's compatibility API: its `Http2ServerRequest` and `Http2ServerResponse` cost a unary gRPC
 * call about 40 µs of a busy server's time (bench/README.md), a tenth of the call. The signal is aborted
 * only when the client leaves before the answer is written, as `universalRequestOf`'s is.
 */
export function universalRequestOfStream(
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  contextValues: ContextValues,
): UniversalServerRequest {
  const abort = new AbortController();
  // A reset connection errors the stream, then closes it; the close is what ends the call. Node's
  // compatibility objects listen for the error too: a stream error no one hears ends the process.
  stream.on("error", () => {});
  stream.once("close", () => {
    if (!stream.writableEnded) abort.abort(clientLeft);
  });
  return {
    httpVersion: "2.0",
    method: String(headers[":method"] ?? ""),
    url: new URL(String(headers[":path"] ?? ""), `http://${headers[":authority"] ?? "localhost"}`).toString(),
    header: webHeadersOf(headers),
    // A handler that stops reading early (a second message, a message over the limit) still answers
    // on the stream, so leaving the loop must not destroy it, as it does by default.
    body: stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>,
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

/**
 * `writeUniversalResponse` onto an HTTP/2 stream: the headers once the first chunk is read, each chunk as
 * it comes, then the trailers as the answer holds them when the last chunk is written (a streaming
 * handler sets them as it ends). Rejects with `aborted` when the client leaves first.
 */
export async function writeUniversalResponseToStream(
  answer: UniversalServerResponse,
  stream: ServerHttp2Stream,
): Promise<void> {
  const chunks = answer.body?.[Symbol.asyncIterator]();
  let closed = false;
  let wake = () => {};
  const onClose = () => {
    closed = true;
    wake();
  };
  stream.once("close", onClose);
  try {
    let chunk = await chunks?.next();
    if (closed) throw clientLeft;
    const trailer = answer.trailer;
    if (trailer) stream.once("wantTrailers", () => stream.sendTrailers(nodeHeadersOf(trailer) ?? {}));
    stream.respond(
      { ...nodeHeadersOf(answer.header), ":status": answer.status },
      { waitForTrailers: trailer !== undefined },
    );
    for (; chunk !== undefined && chunk.done !== true; chunk = await chunks?.next()) {
      if (closed) throw clientLeft;
      if (stream.write(chunk.value)) continue;
      let onDrain = () => {};
      await new Promise<void>((resolve) => {
        wake = onDrain = resolve;
        stream.once("drain", onDrain);
      });
      stream.off("drain", onDrain);
      if (closed) throw clientLeft;
    }
    stream.end();
  } catch (error) {
    await chunks?.return?.();
    stream.destroy();
    throw error;
  } finally {
    stream.off("close", onClose);
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
