import { fromJson, type JsonValue, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createHandlerContext,
  type MethodImplSpec,
} from "@connectrpc/connect";
import {
  createAsyncIterable,
  createMethodSerializationLookup,
  transformInvokeImplementation,
  type UniversalHandlerOptions,
} from "@connectrpc/connect/protocol";

/** A server-streaming RPC's request as the REST gateway has it: the message as JSON, checked against the route. */
export interface JsonStreamRequest {
  message: JsonValue;
  /** The forwarded request headers (x-api-key, Last-Event-ID, ...), as the implementation's context has them. */
  header: Headers;
  contextValues: ContextValues;
  /** Aborted when the client leaves: the implementation's context follows it. */
  signal: AbortSignal;
  url: string;
}

/** The stream's messages; iterating rejects with the error that ended it. */
export interface JsonStream {
  /** What the call set as its response headers (the rate headers, D11). */
  header: Headers;
  /**
   * The messages as the implementation gave them, for a body that writes them in a form of its own (an
   * export's NDJSON or CSV, D45) without a JSON text to parse back.
   */
  messages: AsyncIterable<Message>;
  /** A message as its JSON bytes, as the Connect protocol writes it (SSE's data, D44). */
  toJson(message: Message): Uint8Array;
}

/** One server-streaming RPC, called in-process with its request as JSON (the REST gateway's streams). */
export type JsonStreamCall = (request: JsonStreamRequest) => JsonStream;

/**
 * REST's way into a server-streaming RPC: the request decoded as Connect's JSON decodes it, the
 * implementation run by connect-es's own `transformInvokeImplementation` through the interceptors every
 * protocol shares, on connect-es's own handler context, and each message written, when asked, by the same
 * JSON serializer the Connect protocol uses. What it leaves out is the envelope of a protocol around the
 * messages: the gateway writes them as Server-Sent Events, or as a file.
 */
export function createJsonStreamCall(
  opt: UniversalHandlerOptions,
  spec: MethodImplSpec & { kind: "server_streaming" },
): JsonStreamCall {
  const output = createMethodSerializationLookup(spec.method, opt.binaryOptions, opt.jsonOptions, opt).getO(
    false,
  );
  return ({ message, header, contextValues, signal, url }) => {
    const context = createHandlerContext({
      service: spec.method.parent,
      method: spec.method,
      protocolName: "connect",
      requestMethod: "GET",
      url,
      requestSignal: signal,
      requestHeader: header,
      contextValues,
    });
    const invoke = transformInvokeImplementation(spec, context, opt.interceptors);
    async function* messages(): AsyncGenerator<Message> {
      try {
        yield* invoke(createAsyncIterable([parse(spec, message)]));
      } finally {
        context.abort();
      }
    }
    return {
      header: context.responseHeader,
      messages: messages(),
      toJson: (answer) => output.serialize(answer),
    };
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
