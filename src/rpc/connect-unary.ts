import { Code, ConnectError, type MethodImplSpec } from "@connectrpc/connect";
import {
  compressionNegotiate,
  createMethodSerializationLookup,
  type ProtocolHandlerFactory,
  readAllBytes,
  type UniversalHandler,
  type UniversalHandlerOptions,
  type UniversalServerRequest,
  type UniversalServerResponse,
  uResponseUnsupportedMediaType,
  validateUniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  contentTypeUnaryJson,
  contentTypeUnaryProto,
  createHandlerFactory as createConnectHandlerFactory,
  errorToJsonBytes,
  headerContentType,
  headerTimeout,
  headerUnaryAcceptEncoding,
  headerUnaryContentLength,
  headerUnaryEncoding,
  parseContentType,
  parseTimeout,
  trailerMux,
} from "@connectrpc/connect/protocol-connect";
import { callEnded, callError } from "./call-ended.js";
import { oneChunk } from "./one-chunk.js";
import { clientLeaving, invokeUnary, unaryContext } from "./unary-context.js";

/**
 * The Connect protocol's unary POST, answered as connect-es's own Connect handler answers it, on flowlog's
 * call context (unary-context.ts) and with the answer as one chunk (one-chunk.ts). Everything
 * protocol-specific is connect-es's exported code (content types, `connect-timeout-ms`, compression
 * negotiation, serialization limits, the error body and its HTTP status, trailers as `trailer-` headers),
 * so the wire is what Connect writes; `test/connect-differential.test.ts` holds the two to the same bytes.
 * A request refused at the gate (request-gate.ts) fails here when its body is read, and is answered as any
 * error is. Connect's own handler keeps what this one leaves to it: GET (a message in the query), a server
 * that requires the protocol version header, and streaming methods. Why it is kept: src/rpc/README.md.
 */
export function createConnectUnaryHandlerFactory(
  options: Partial<UniversalHandlerOptions>,
): ProtocolHandlerFactory {
  const opt = validateUniversalHandlerOptions(options);
  const connect = createConnectHandlerFactory(opt);
  const factory = (spec: MethodImplSpec): UniversalHandler => {
    const connectHandler = connect(spec);
    if (spec.kind !== "unary" || opt.requireConnectProtocolHeader) return connectHandler;
    const post = unaryPost(opt, spec);
    const handle = (req: UniversalServerRequest) => (req.method === "POST" ? post(req) : connectHandler(req));
    return Object.assign(handle, {
      protocolNames: connectHandler.protocolNames,
      supportedContentType: connectHandler.supportedContentType,
      allowedMethods: connectHandler.allowedMethods,
      requestPath: connectHandler.requestPath,
      service: connectHandler.service,
      method: connectHandler.method,
    });
  };
  return Object.assign(factory, { protocolName: connect.protocolName });
}

function unaryPost(opt: UniversalHandlerOptions, spec: MethodImplSpec & { kind: "unary" }) {
  const serialization = createMethodSerializationLookup(spec.method, opt.binaryOptions, opt.jsonOptions, opt);
  return async function handle(req: UniversalServerRequest): Promise<UniversalServerResponse> {
    const type = parseContentType(req.header.get(headerContentType));
    if (type === undefined || type.stream) return uResponseUnsupportedMediaType;
    const timeout = parseTimeout(req.header.get(headerTimeout), opt.maxTimeoutMs);
    const { context, abort } = unaryContext(spec, {
      protocolName: "connect",
      requestMethod: req.method,
      url: req.url,
      requestHeader: req.header,
      ...clientLeaving(req),
      timeoutMs: timeout.timeoutMs,
      contextValues: req.contextValues,
      responseHeader: { [headerContentType]: type.binary ? contentTypeUnaryProto : contentTypeUnaryJson },
    });
    const compression = compressionNegotiate(
      opt.acceptCompression,
      req.header.get(headerUnaryEncoding),
      req.header.get(headerUnaryAcceptEncoding),
      headerUnaryAcceptEncoding,
    );
    let status = 200;
    let body: Uint8Array;
    try {
      if (compression.error) throw compression.error;
      if (timeout.error) throw timeout.error;
      const input = serialization.getI(type.binary).parse(await readBody(req, opt.readMaxBytes, compression));
      const output = await invokeUnary(spec, context, input, opt.interceptors);
      body = serialization.getO(type.binary).serialize(output);
      abort(callEnded);
    } catch (caught) {
      abort(caught);
      const error = callError(caught);
      status = codeToHttpStatus(error.code);
      context.responseHeader.set(headerContentType, contentTypeUnaryJson);
      for (const [name, value] of error.metadata) context.responseHeader.set(name, value);
      body = errorToJsonBytes(error, opt.jsonOptions);
    }
    if (compression.response && body.byteLength >= opt.compressMinBytes) {
      body = await compression.response.compress(body);
      context.responseHeader.set(headerUnaryEncoding, compression.response.name);
    }
    const header = trailerMux(context.responseHeader, context.responseTrailer);
    header.set(headerUnaryContentLength, body.byteLength.toString(10));
    return { status, body: oneChunk(body), header };
  };
}

/** The request's message bytes, within `readMaxBytes` before and after decompression, as Connect reads them. */
async function readBody(
  req: UniversalServerRequest,
  readMaxBytes: number,
  compression: ReturnType<typeof compressionNegotiate>,
): Promise<Uint8Array> {
  const { body } = req;
  if (body instanceof Uint8Array) return body;
  if (!(typeof body === "object" && body !== null && Symbol.asyncIterator in body)) {
    throw new ConnectError("Connect requests carry a byte stream", Code.Internal);
  }
  const bytes = await readAllBytes(body, readMaxBytes, req.header.get(headerUnaryContentLength));
  return compression.request ? compression.request.decompress(bytes, readMaxBytes) : bytes;
}
