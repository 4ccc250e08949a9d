import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type MethodImplSpec } from "@connectrpc/connect";
import { createMethodSerializationLookup, type UniversalHandlerOptions } from "@connectrpc/connect/protocol";
import { callEnded, callError } from "./call-ended.js";
import { invokeUnary, type OnClientGone, unaryContext } from "./unary-context.js";

/** A unary RPC's request as the REST gateway has it: the message as JSON, already checked against the route. */
export interface JsonCallRequest {
  message: JsonValue;
  /** The forwarded request headers (x-api-key, ...), as the implementation's context has them. */
  header: Headers;
  contextValues: ContextValues;
  /**
   * Given the call's cancellation, for the caller to run if the client leaves before the answer is
   * written (unary-context.ts).
   */
  onClientGone: OnClientGone;
  url: string;
}

/** The call's answer: the response message's JSON bytes, or the error; `header` is what the call set. */
export type JsonCallAnswer = { header: Headers } & (
  | { body: Uint8Array; error?: undefined }
  | { body?: undefined; error: ConnectError }
);

/** One unary RPC, called in-process with its request as JSON. */
export type JsonCall = (request: JsonCallRequest) => Promise<JsonCallAnswer>;

/**
 * The REST gateway's way into an RPC (D2, issue 13): the request decoded as Connect's JSON decodes it,
 * then the implementation invoked through the interceptors every protocol shares
 * (`invokeUnary`, as grpc-unary.ts does), and the answer written by
 * the same serializer, so a REST body is still the Connect JSON answer byte for byte. What it leaves
 * out is the Connect protocol around that, which a call made in-process does not need: content type,
 * protocol version, timeout header and compression negotiation (the gateway forwards none of those
 * headers), the body as an async iterable read back into one buffer, an error written as Connect's
 * JSON and parsed back, and the `DOMException` of Connect's reasonless abort at the end of every call.
 * Its context is flowlog's unary one (unary-context.ts), as for gRPC.
 */
export function createJsonCall(
  opt: UniversalHandlerOptions,
  spec: MethodImplSpec & { kind: "unary" },
): JsonCall {
  const output = createMethodSerializationLookup(spec.method, opt.binaryOptions, opt.jsonOptions, opt).getO(
    false,
  );
  return async ({ message, header, contextValues, onClientGone, url }) => {
    const { context, abort } = unaryContext(spec, {
      protocolName: "connect",
      requestMethod: "POST",
      url,
      requestHeader: header,
      onClientGone,
      contextValues,
    });
    try {
      const input = parse(spec, message);
      const body = output.serialize(await invokeUnary(spec, context, input, opt.interceptors));
      abort(callEnded);
      return { header: context.responseHeader, body };
    } catch (error) {
      abort(error);
      return { header: context.responseHeader, error: callError(error) };
    }
  };
}

/** The request message, refused as Connect refuses JSON that does not decode: invalid_argument. */
function parse(spec: MethodImplSpec, message: JsonValue) {
  try {
    return fromJson(spec.method.input, message);
  } catch (error) {
    throw ConnectError.from(error, Code.InvalidArgument);
  }
}
