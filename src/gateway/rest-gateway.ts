import type { JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, createContextValues } from "@connectrpc/connect";
import { invalidArgument } from "../errors/api-errors.js";
import { problemFromError } from "../errors/problem.js";
import { toPublicError } from "../errors/public-error.js";
import type { JsonStreamCall } from "../rpc/json-stream.js";
import type { JsonCall } from "../rpc/json-unary.js";
import { clientGoneOf } from "../rpc/node-exchange.js";
import {
  type ClientAddress,
  closeIfBodyUnread,
  type NodeRequest,
  type NodeResponse,
} from "../rpc/node-http.js";
import {
  clientAddressKey,
  type FrontDoor,
  procedureOf,
  protocolKey,
  rateHeadersOf,
} from "../server/front-door.js";
import { restStatusKey } from "../services/rest-status.js";
import { requestUrl } from "../util/request-url.js";
import { bodyViolations } from "./body-errors.js";
import { answerEventStream } from "./event-stream.js";
import { answerExportDownload } from "./export-download.js";
import { type HttpRoute, matchRoutes, restStreamForm } from "./http-rules.js";
import { BodyTooLarge, readRequestBody } from "./request-body.js";
import { buildRequestJson } from "./request-json.js";
import { chooseEncoding, defaultCompressMinBytes, encode } from "./response-encoding.js";

/** Answers a REST request; resolves false when no annotated route has the path. */
export type RestGateway = (req: NodeRequest, res: NodeResponse, url?: URL) => Promise<boolean>;

export interface RestGatewayOptions {
  routes: HttpRoute[];
  /**
   * Each unary RPC's JSON call by request path (src/rpc/json-unary.ts), without the front door: the
   * gateway admits each request itself, in D28's order.
   */
  calls: ReadonlyMap<string, JsonCall>;
  /**
   * Each server-streaming RPC's JSON call by request path (src/rpc/json-stream.ts), answered as SSE (D44)
   * or as a file (D45; http-rules.ts's restStreamForm).
   */
  streamCalls?: ReadonlyMap<string, JsonStreamCall>;
  frontDoor: FrontDoor;
  /** The largest body accepted, after decompression (D26). */
  maxBodyBytes: number;
  /** D29: answers from this many bytes are compressed for a client that accepts it. */
  compressMinBytes?: number;
  /** The client's address, as the RPC paths take it. */
  clientAddress: ClientAddress;
}

/**
 * The REST/JSON gateway (D2). Each annotated route is answered by calling its RPC in-process with the
 * request as JSON (src/rpc/json-unary.ts), so REST requests pass through the very same front door,
 * interceptors (rate headers, errors), implementation and serializer as gRPC, gRPC-Web and Connect; a
 * successful response body is the Connect JSON answer, byte for byte.
 */
export function createRestGateway({
  routes,
  calls,
  streamCalls = new Map(),
  frontDoor,
  maxBodyBytes,
  compressMinBytes = defaultCompressMinBytes,
  clientAddress,
}: RestGatewayOptions): RestGateway {
  const callOf = new Map<HttpRoute, RouteCall>(
    routes.map((route): [HttpRoute, RouteCall] => {
      const path = `/${procedureOf(route.method)}`;
      const url = `http://gateway${path}`;
      if (route.method.methodKind === "server_streaming") {
        const streamCall = streamCalls.get(path);
        if (!streamCall) throw new Error(`no server-streaming RPC is registered for ${path}`);
        return [route, { streamCall, url }];
      }
      const call = calls.get(path);
      if (!call) throw new Error(`no unary RPC is registered for ${path}`);
      return [route, { call, url }];
    }),
  );

  return async (req, res, url = requestUrl(req)) => {
    const matches = matchRoutes(routes, url.pathname);
    if (matches.length === 0) return false;
    const chosen = matches.find((m) => m.route.httpMethod === req.method);
    if (!chosen) {
      res.setHeader("allow", [...new Set(matches.map((m) => m.route.httpMethod))].join(", "));
      const error = new ConnectError(`${req.method} is not allowed on ${url.pathname}`, Code.Unimplemented);
      writeProblem(res, error, 405);
      return true;
    }
    const rpc = callOf.get(chosen.route) as RouteCall;
    // D28: authenticate and take the token from the headers, before the body is read or the request checked.
    const contextValues = createContextValues()
      .set(clientAddressKey, clientAddress(req))
      .set(protocolKey, "rest");
    const header = forwardedHeaders(req);
    const refusal = await frontDoor.admit({ method: chosen.route.method, header, contextValues });
    // Every answer after admission, refusals and invalid requests included, carries the rate headers.
    for (const [name, value] of rateHeadersOf(contextValues) ?? []) res.setHeader(name, value);
    if (refusal) {
      writeRefusal(req, res, refusal);
      return true;
    }
    try {
      const request = { pathValues: chosen.pathValues, query: url.searchParams, header, contextValues };
      await answer(req, res, chosen.route, rpc, request, { maxBodyBytes, compressMinBytes });
    } catch (error) {
      // Reading or checking the request failed after admission: the answer still carries the rate headers.
      writeRefusal(req, res, toPublicError(error, "rest gateway"));
    }
    return true;
  };
}

/** A route's RPC, unary or server-streaming, and the URL its implementation's context is given. */
type RouteCall = { url: string } & (
  | { call: JsonCall; streamCall?: undefined }
  | { call?: undefined; streamCall: JsonStreamCall }
);

async function answer(
  req: NodeRequest,
  res: NodeResponse,
  route: HttpRoute,
  { call, streamCall, url }: RouteCall,
  request: { pathValues: string[]; query: URLSearchParams; header: Headers; contextValues: ContextValues },
  { maxBodyBytes, compressMinBytes }: { maxBodyBytes: number; compressMinBytes: number },
): Promise<void> {
  const body = route.body === undefined ? undefined : await readJsonBody(req, maxBodyBytes);
  const built = buildRequestJson(route, { pathValues: request.pathValues, query: request.query, body });
  if (!built.ok) throw invalidArgument(built.violations);
  const violations = body === undefined ? [] : bodyViolations(route.method.input, built.json);
  if (violations.length > 0) throw invalidArgument(violations);

  // Only a client that leaves before the answer is sent cancels the call: the call's own signal is the
  // only one made (an AbortController per request costs a few microseconds, issue 13).
  const { header, contextValues } = request;
  if (streamCall) {
    const gone = new AbortController();
    res.once("close", () => gone.abort());
    const stream = streamCall({ message: built.json, header, contextValues, signal: gone.signal, url });
    const problem = (error: ConnectError) => writeProblem(res, error);
    const headers = (from: Headers) => copyHeaders(from, res);
    if (restStreamForm(route.method) === "download") {
      await answerExportDownload(res, stream, built.json, problem, headers);
    } else {
      await answerEventStream(res, stream, problem, headers);
    }
    return;
  }
  const onClientGone = clientGoneOf(res);
  const answered = await call({ message: built.json, header, contextValues, onClientGone, url });
  copyHeaders(answered.header, res);
  if (answered.error) {
    writeProblem(res, answered.error);
    return;
  }
  const bytes = answered.body;
  const encoding = chooseEncoding(req.headers["accept-encoding"], bytes.length, compressMinBytes);
  const headers = { "content-type": "application/json", vary: "accept-encoding" };
  if (encoding === undefined) {
    res.writeHead(contextValues.get(restStatusKey), headers);
    res.end(bytes);
    return;
  }
  const encoded = await encode(bytes, encoding);
  res.writeHead(contextValues.get(restStatusKey), { ...headers, "content-encoding": encoding });
  res.end(encoded);
}

async function readJsonBody(req: NodeRequest, maxBodyBytes: number): Promise<JsonValue | undefined> {
  const text = (await readRequestBody(req, maxBodyBytes)).toString("utf8");
  if (text.trim() === "") return undefined;
  const contentType = String(req.headers["content-type"] ?? "application/json");
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    throw invalidArgument([{ field: "body", message: "body must be JSON (content-type application/json)" }]);
  }
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw invalidArgument([{ field: "body", message: "body is not valid JSON" }]);
  }
}

/** A refusal before the handler ran. */
function writeRefusal(req: NodeRequest, res: NodeResponse, error: ConnectError): void {
  closeIfBodyUnread(req, res);
  writeProblem(res, error, error instanceof BodyTooLarge ? 413 : undefined);
}

/** Request headers the protocol layer owns are not forwarded; everything else (x-api-key, ...) is. */
const protocolHeader =
  /^(:|host$|connection$|keep-alive$|upgrade$|http2-settings$|te$|transfer-encoding$|content-|accept-encoding$|connect-|grpc-)/i;

function forwardedHeaders(req: NodeRequest): Headers {
  const header = new Headers({ "content-type": "application/json", "connect-protocol-version": "1" });
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || protocolHeader.test(name)) continue;
    header.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return header;
}

/** Response headers set by interceptors (X-RateLimit-*, D11) reach REST clients; protocol ones do not. */
const protocolResponseHeader = /^(content-|connect-|grpc-|trailer-|accept-encoding$)/i;

function copyHeaders(from: Headers | undefined, res: NodeResponse): void {
  from?.forEach((value, name) => {
    if (!protocolResponseHeader.test(name)) res.setHeader(name, value);
  });
}

export function writeProblem(res: NodeResponse, error: ConnectError, status?: number): void {
  copyHeaders(error.metadata, res);
  const problem = problemFromError(error, status);
  res.writeHead(problem.status, { "content-type": "application/problem+json" });
  res.end(JSON.stringify(problem));
}
