import type { DescMethod } from "@bufbuild/protobuf";
import type { ConnectError, ContextValues } from "@connectrpc/connect";
import type {
  UniversalHandler,
  UniversalServerRequest,
  UniversalServerResponse,
} from "@connectrpc/connect/protocol";

/** What a gate is shown of a request: its method and headers, never its body. */
export interface GatedRequest {
  method: DescMethod;
  header: Headers;
  contextValues: ContextValues;
}

/**
 * A check made from a request's headers before its handler reads the body (flowlog's front door, D28).
 * `admit` resolves to the refusal, or to nothing to let the request through; `answerHeaders` gives what
 * every answer to an admitted request carries, whatever produced it.
 */
export interface RequestGate {
  admit(request: GatedRequest): Promise<ConnectError | undefined>;
  answerHeaders(contextValues: ContextValues): Headers | undefined;
}

/**
 * The handler behind the gate. A refused request reaches the handler with a body that fails with the
 * refusal when read, and with only the headers that choose its answer's form (below): the handler then
 * answers the refusal in its own protocol's form (a Connect error body, gRPC trailers, a gRPC-Web trailer
 * frame) having read no byte the client sent and no header a stranger could learn from. Every handler
 * checks a malformed timeout, an unknown encoding and a declared length over the limit before it reads
 * the body; kept, those would be answered instead of the refusal.
 */
export function behindGate(handler: UniversalHandler, gate: RequestGate): UniversalHandler {
  const guarded = async (request: UniversalServerRequest): Promise<UniversalServerResponse> => {
    const contextValues = request.contextValues;
    if (!contextValues) return handler(request);
    const refusal = await gate.admit({ method: handler.method, header: request.header, contextValues });
    const response = await handler(refusal ? refusedRequest(request, refusal) : request);
    // Also on what the handler refuses before any interceptor runs (a body over the limit, a malformed
    // message).
    const headers = gate.answerHeaders(contextValues);
    if (!headers) return response;
    const header = response.header ?? new Headers();
    for (const [name, value] of headers) header.set(name, value);
    return { ...response, header };
  };
  return Object.assign(guarded, {
    requestPath: handler.requestPath,
    method: handler.method,
    service: handler.service,
    protocolNames: handler.protocolNames,
    allowedMethods: handler.allowedMethods,
    supportedContentType: handler.supportedContentType,
  }) as UniversalHandler;
}

/** The request headers a handler reads to choose its answer's form: protocol, codec, answer compression. */
const answerFormHeaders = [
  "content-type",
  "accept-encoding",
  "connect-accept-encoding",
  "grpc-accept-encoding",
];

function refusedRequest(request: UniversalServerRequest, refusal: ConnectError): UniversalServerRequest {
  const header = new Headers();
  for (const name of answerFormHeaders) {
    const value = request.header.get(name);
    if (value !== null) header.set(name, value);
  }
  // The request's signal is a getter of its class (node-exchange.ts), which a spread would leave out.
  return { ...request, header, signal: request.signal, body: refused(refusal) };
}

async function* refused(refusal: ConnectError): AsyncIterable<Uint8Array> {
  yield* [];
  throw refusal;
}
