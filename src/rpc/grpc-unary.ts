import { Code, ConnectError, type MethodImplSpec } from "@connectrpc/connect";
import {
  type Compression,
  compressedFlag,
  compressionNegotiate,
  contentTypeMatcher,
  createMethodSerializationLookup,
  createMethodUrl,
  type ProtocolHandlerFactory,
  type UniversalHandler,
  type UniversalHandlerOptions,
  type UniversalServerRequest,
  type UniversalServerResponse,
  uResponseMethodNotAllowed,
  uResponseOk,
  uResponseUnsupportedMediaType,
  validateUniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import * as grpc from "@connectrpc/connect/protocol-grpc";
import {
  grpcStatusOk,
  headerAcceptEncoding,
  headerContentType,
  headerEncoding,
  headerGrpcStatus,
  headerTimeout,
  parseTimeout,
  setTrailerStatus,
} from "@connectrpc/connect/protocol-grpc";
import * as grpcWeb from "@connectrpc/connect/protocol-grpc-web";
import { callEnded, callError } from "./call-ended.js";
import { oneChunk } from "./one-chunk.js";
import { clientLeaving, invokeUnary, unaryContext } from "./unary-context.js";

/**
 * gRPC and gRPC-Web for unary RPCs without Connect's streaming machinery (issue 13). connect-es answers
 * every call of both, unary ones too, through a chain of async iterables (split, decompress, parse,
 * invoke, serialize, compress, join) and aborts the call's signal without a reason when it ends, which
 * builds a `DOMException`: about 400 µs of a busy server's time per gRPC call against 190 µs for the same
 * work behind bare `node:http2` (bench/README.md), and a gRPC-Web entry cost 1.4 to 2.2 times the same
 * entry over the Connect protocol. Every flowlog RPC but reflection is unary, and internal services reach
 * flowlog over gRPC first.
 *
 * These factories answer a unary call the way Connect's own handler for the Connect protocol does, in one
 * pass: read the one enveloped message, invoke the implementation through the same interceptors, write
 * the one enveloped answer and the status: in HTTP trailers for gRPC, in a trailer envelope after the
 * answer for gRPC-Web. Everything protocol-specific is Connect's own exported code (content types,
 * `grpc-timeout`, compression negotiation, serialization limits, the status trailers with their details,
 * gRPC-Web's trailer serialization), so the wire stays what Connect writes; the differential test
 * `test/grpc-differential.test.ts` holds the two to the same bytes for both. Streaming methods
 * (reflection) keep Connect's handlers.
 */
export function createGrpcHandlerFactory(options: Partial<UniversalHandlerOptions>): ProtocolHandlerFactory {
  return createFactory(options, grpcFraming);
}

/** gRPC-Web, as gRPC but with the status in the body (above). */
export function createGrpcWebHandlerFactory(
  options: Partial<UniversalHandlerOptions>,
): ProtocolHandlerFactory {
  return createFactory(options, grpcWebFraming);
}

/** What differs between gRPC and gRPC-Web for a unary call. */
interface Framing {
  /** Connect's handler factory, for streaming methods and for the protocol's name. */
  connectFactory: (options: Partial<UniversalHandlerOptions>) => ProtocolHandlerFactory;
  contentTypeRegExp: RegExp;
  /** The request's content type, or undefined for one this handler does not answer (415). */
  contentType(header: string | null): { binary: boolean } | undefined;
  contentTypeProto: string;
  contentTypeJson: string;
  /** The flag of a request envelope that carries no message, passed over: gRPC-Web's trailers. */
  skipFlag?: number;
  /** The answer's body and trailers, from its enveloped message (none after an error) and its status. */
  frame(
    answer: Uint8Array | undefined,
    trailer: Headers,
    compression: Compression | null,
    compressMinBytes: number,
  ): Promise<Pick<UniversalServerResponse, "body" | "trailer">>;
}

const grpcFraming: Framing = {
  connectFactory: grpc.createHandlerFactory,
  contentTypeRegExp: grpc.contentTypeRegExp,
  contentType: grpc.parseContentType,
  contentTypeProto: grpc.contentTypeProto,
  contentTypeJson: grpc.contentTypeJson,
  frame: async (answer, trailer) => ({ body: oneChunk(answer), trailer }),
};

/** gRPC-Web's status and trailers as `name: value` lines, in an envelope flagged as trailers. */
const webTrailers = grpcWeb.createTrailerSerialization();

const grpcWebFraming: Framing = {
  connectFactory: grpcWeb.createHandlerFactory,
  contentTypeRegExp: grpcWeb.contentTypeRegExp,
  // Connect answers no grpc-web-text (base64) call; neither does this.
  contentType: (header) => {
    const type = grpcWeb.parseContentType(header);
    return type === undefined || type.text ? undefined : type;
  },
  contentTypeProto: grpcWeb.contentTypeProto,
  contentTypeJson: grpcWeb.contentTypeJson,
  skipFlag: grpcWeb.trailerFlag,
  async frame(answer, trailer, compression, compressMinBytes) {
    const trailers = await envelope(
      webTrailers.serialize(trailer),
      compression,
      compressMinBytes,
      grpcWeb.trailerFlag,
    );
    return { body: oneChunk(answer === undefined ? trailers : Buffer.concat([answer, trailers])) };
  },
};

function createFactory(options: Partial<UniversalHandlerOptions>, framing: Framing): ProtocolHandlerFactory {
  const opt = validateUniversalHandlerOptions(options);
  const connectFactory = framing.connectFactory(opt);
  const factory = (spec: MethodImplSpec): UniversalHandler => {
    if (spec.kind !== "unary") return connectFactory(spec);
    return Object.assign(unaryHandler(opt, spec, framing, connectFactory.protocolName), {
      protocolNames: [connectFactory.protocolName],
      supportedContentType: contentTypeMatcher(framing.contentTypeRegExp),
      allowedMethods: ["POST"],
      requestPath: createMethodUrl("/", spec.method),
      service: spec.method.parent,
      method: spec.method,
    });
  };
  return Object.assign(factory, { protocolName: connectFactory.protocolName });
}

function unaryHandler(
  opt: UniversalHandlerOptions,
  spec: MethodImplSpec & { kind: "unary" },
  framing: Framing,
  protocolName: string,
) {
  const serialization = createMethodSerializationLookup(spec.method, opt.binaryOptions, opt.jsonOptions, opt);
  return async function handle(req: UniversalServerRequest): Promise<UniversalServerResponse> {
    const type = framing.contentType(req.header.get(headerContentType));
    if (type === undefined) return uResponseUnsupportedMediaType;
    if (req.method !== "POST") return uResponseMethodNotAllowed;
    const timeout = parseTimeout(req.header.get(headerTimeout), opt.maxTimeoutMs);
    const { context, abort } = unaryContext(spec, {
      protocolName,
      requestMethod: req.method,
      url: req.url,
      requestHeader: req.header,
      ...clientLeaving(req),
      timeoutMs: timeout.timeoutMs,
      contextValues: req.contextValues,
      responseHeader: {
        [headerContentType]: type.binary ? framing.contentTypeProto : framing.contentTypeJson,
      },
      responseTrailer: { [headerGrpcStatus]: grpcStatusOk },
    });
    const compression = compressionNegotiate(
      opt.acceptCompression,
      req.header.get(headerEncoding),
      req.header.get(headerAcceptEncoding),
      headerAcceptEncoding,
    );
    if (compression.response) context.responseHeader.set(headerEncoding, compression.response.name);
    let answer: Uint8Array | undefined;
    try {
      if (compression.error) throw compression.error;
      if (timeout.error) throw timeout.error;
      const bytes = await readUnaryMessage(req.body, compression.request, opt.readMaxBytes, framing.skipFlag);
      const input = serialization.getI(type.binary).parse(bytes);
      const output = await invokeUnary(spec, context, input, opt.interceptors);
      answer = await envelope(
        serialization.getO(type.binary).serialize(output),
        compression.response,
        opt.compressMinBytes,
      );
      abort(callEnded);
    } catch (error) {
      abort(error);
      setTrailerStatus(context.responseTrailer, callError(error));
    }
    const framed = await framing.frame(
      answer,
      context.responseTrailer,
      compression.response,
      opt.compressMinBytes,
    );
    return { ...uResponseOk, header: context.responseHeader, ...framed };
  };
}

/** The envelope's header: one byte of flags, four of length, big-endian (gRPC over HTTP/2). */
const envelopeHeaderBytes = 5;

/**
 * The call's one message, decompressed. Refuses what Connect's pipeline refuses, with its errors: a
 * message declared larger than `readMaxBytes` before it is read, a truncated envelope, none or more than
 * one message. A stream that goes on after the first message is read only as far as the next header.
 * gRPC-Web's trailers flag (`skipFlag`) marks an envelope that is no message: a client never sends one,
 * and connect-es reads it (decompressing it, within the limit) and passes over it; so does this, one
 * envelope held at a time, for as long as the body lasts (D27's body deadline bounds that).
 */
async function readUnaryMessage(
  body: UniversalServerRequest["body"],
  compression: Compression | null,
  readMaxBytes: number,
  skipFlag: number | undefined,
): Promise<Uint8Array> {
  if (!isByteStream(body)) {
    throw new ConnectError("gRPC requests carry an enveloped byte stream", Code.Internal);
  }
  /** What is received and not yet read as a whole envelope: at most the one it is in. */
  const chunks: Uint8Array[] = [];
  let unread = 0;
  let received = 0;
  let header: { flags: number; length: number } | undefined;
  let message: { flags: number; data: Uint8Array } | undefined;
  for await (const chunk of body) {
    chunks.push(chunk);
    unread += chunk.byteLength;
    received += chunk.byteLength;
    for (;;) {
      if (header === undefined) {
        if (unread < envelopeHeaderBytes) break;
        const bytes = concat(chunks, unread);
        header = { flags: bytes[0] as number, length: declaredLength(bytes, 0, readMaxBytes) };
        if (message !== undefined && !flagged(header.flags, skipFlag)) {
          throw new ConnectError(
            "protocol error: received extra input message for unary method",
            Code.Unimplemented,
          );
        }
      }
      if (unread < envelopeHeaderBytes + header.length) break;
      const bytes = concat(chunks, unread);
      const data = bytes.subarray(envelopeHeaderBytes, envelopeHeaderBytes + header.length);
      if (flagged(header.flags, skipFlag)) await decompressed(header.flags, data, compression, readMaxBytes);
      else message = { flags: header.flags, data };
      const rest = bytes.subarray(envelopeHeaderBytes + header.length);
      chunks.splice(0, chunks.length, ...(rest.byteLength > 0 ? [rest] : []));
      unread = rest.byteLength;
      header = undefined;
    }
  }
  if (received === 0) {
    throw new ConnectError("protocol error: missing input message for unary method", Code.Unimplemented);
  }
  if (unread > 0) {
    throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  }
  if (message === undefined) {
    throw new ConnectError("protocol error: missing input message for unary method", Code.Unimplemented);
  }
  return decompressed(message.flags, message.data, compression, readMaxBytes);
}

function flagged(flags: number, flag: number | undefined): boolean {
  return flag !== undefined && (flags & flag) === flag;
}

async function decompressed(
  flags: number,
  data: Uint8Array,
  compression: Compression | null,
  readMaxBytes: number,
): Promise<Uint8Array> {
  if ((flags & compressedFlag) !== compressedFlag) return data;
  if (!compression) {
    throw new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal);
  }
  return compression.decompress(data, readMaxBytes);
}

function isByteStream(body: UniversalServerRequest["body"]): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}

/** The length in the envelope header at `offset`, refused when it passes the limit (before it is read). */
function declaredLength(bytes: Uint8Array, offset: number, readMaxBytes: number): number {
  const length = new DataView(bytes.buffer, bytes.byteOffset + offset, envelopeHeaderBytes).getUint32(1);
  if (length > readMaxBytes) {
    throw new ConnectError(
      `message size ${length} is larger than configured readMaxBytes ${readMaxBytes}`,
      Code.ResourceExhausted,
    );
  }
  return length;
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  chunks.splice(0, chunks.length, joined);
  return joined;
}

/**
 * A message, or gRPC-Web's trailers, in its envelope: compressed when the client accepts it and it is
 * large enough (D29).
 */
async function envelope(
  data: Uint8Array,
  compression: Compression | null,
  compressMinBytes: number,
  flags = 0,
): Promise<Uint8Array> {
  const compressed = compression !== null && data.byteLength >= compressMinBytes;
  const payload = compressed ? await compression.compress(data) : data;
  const bytes = new Uint8Array(envelopeHeaderBytes + payload.byteLength);
  const view = new DataView(bytes.buffer);
  view.setUint8(0, compressed ? flags | compressedFlag : flags);
  view.setUint32(1, payload.byteLength);
  bytes.set(payload, envelopeHeaderBytes);
  return bytes;
}
