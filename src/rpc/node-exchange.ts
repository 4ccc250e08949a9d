import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { Code, ConnectError, type ContextValues } from "@connectrpc/connect";
import type { UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { universalResponseToNodeResponse } from "@connectrpc/connect-node";
import { requestUrl } from "../util/request-url.js";
import { bodyOf, type NodeRequest, type NodeResponse } from "./node-http.js";
import { OneChunk } from "./one-chunk.js";
import { clientGoneKey, type OnClientGone } from "./unary-context.js";

/**
 * A Node request as Connect's handlers take it: what connect-node's `universalRequestFromNodeRequest`
 * does, with a cost fewer on every call (issue 13). The call's signal is aborted only when the client
 * leaves before the answer is written, as the REST gateway's is: connect-node aborts it when every HTTP/2
 * stream closes, without a reason, which builds a `DOMException` per call; and it is made only when read,
 * since flowlog's own unary handlers learn of the client leaving from the hook under `clientGoneKey`
 * instead.
 */
export function universalRequestOf(
  req: NodeRequest,
  res: NodeResponse,
  contextValues: ContextValues,
): UniversalServerRequest {
  const onClientGone = clientGoneOf(res, clientLeft);
  // flowlog's unary handlers take the hook (unary-context.ts); the signal is made only for connect-es's
  // own handlers (the Connect protocol, streaming), which read it.
  contextValues.set(clientGoneKey, onClientGone);
  return new NodeUniversalRequest(req, contextValues, onClientGone);
}

/**
 * A class, not an object literal with a getter: a literal's getter keeps the request alive through young
 * collections (unary-context.ts says why).
 */
class NodeUniversalRequest implements UniversalServerRequest {
  readonly httpVersion: string;
  readonly method: string;
  readonly url: string;
  readonly header: Headers;
  readonly body: AsyncIterable<Uint8Array>;
  readonly contextValues: ContextValues;
  readonly #onClientGone: OnClientGone;
  #abort: AbortController | undefined;

  constructor(req: NodeRequest, contextValues: ContextValues, onClientGone: OnClientGone) {
    this.httpVersion = req.httpVersion;
    this.method = req.method ?? "";
    // The client's Host or :authority is not read: a malformed one made connect-node's URL throw, in the
    // listener, taking the process down. Handlers read the path and query only (request-url.ts).
    this.url = requestUrl(req).toString();
    this.header = webHeadersOf(req.headers);
    this.body = bodyOf(req);
    this.contextValues = contextValues;
    this.#onClientGone = onClientGone;
  }

  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      const made = new AbortController();
      this.#onClientGone((reason) => made.abort(reason));
      this.#abort = made;
    }
    return this.#abort.signal;
  }
}

/**
 * A call's hook for the client leaving (unary-context.ts), from its response: the cancellation runs,
 * with `reason`, when the response closes before the answer was ended. Not `writableFinished`: an HTTP/2
 * response reports it true once the client resets its stream, so a client leaving over HTTP/2 would
 * never cancel its call.
 */
export function clientGoneOf(res: NodeResponse, reason?: unknown): OnClientGone {
  return (cancel) =>
    res.once("close", () => {
      if (!res.writableEnded) cancel(reason);
    });
}

const clientLeft = new ConnectError("the client left before the answer was written", Code.Aborted);

/**
 * Writes the handler's answer. A unary answer (`OneChunk`) is complete, headers and all, and is written
 * at once; any other body, a stream's, is written by connect-node's own writer, which rejects with
 * `aborted` when the client leaves first. Its promise resolves only on an `end` event Node's responses
 * do not emit, so nothing may wait for it to resolve.
 */
export async function writeUniversalResponse(
  answer: UniversalServerResponse,
  res: NodeResponse,
): Promise<void> {
  if (answer.body instanceof OneChunk) writeOneChunk(answer, answer.body.chunk, res);
  else await universalResponseToNodeResponse(answer, res);
}

/**
 * A unary answer (one-chunk.ts), whole: headers, its chunk and trailers in one `end`, without the
 * iterator's promises (issue 13). Node buffers what the socket does not take at once; the chunk is held
 * in memory either way, and the socket's close frees it if the client leaves.
 */
function writeOneChunk(
  answer: UniversalServerResponse,
  chunk: Uint8Array | undefined,
  res: NodeResponse,
): void {
  if (responseClosed(res)) {
    res.destroy();
    throw clientLeft;
  }
  res.writeHead(answer.status, nodeHeadersOf(answer.header));
  if (answer.trailer) res.addTrailers(nodeHeadersOf(answer.trailer) ?? {});
  if (chunk === undefined) res.end();
  else res.end(chunk);
}

/** Whether the response was closed (the client left, or it was destroyed), over HTTP/1.1 or HTTP/2. */
function responseClosed(res: NodeResponse): boolean {
  return "stream" in res ? res.stream.destroyed : res.destroyed;
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
