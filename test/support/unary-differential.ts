import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import { compressionGzip, connectNodeAdapter } from "@connectrpc/connect-node";
import { afterAll, beforeAll } from "vitest";
import { ListLogsResponseSchema, LogsService } from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { invalidArgument } from "../../src/errors/api-errors.js";
import { answerSerialization } from "../../src/rpc/answer-serialization.js";
import { createNodeListener } from "../../src/rpc/node-adapter.js";
import type { NodeRequest, NodeResponse } from "../../src/rpc/node-http.js";
import { createRouter } from "../../src/rpc/router.js";

/**
 * What the differential tests of flowlog's RPC layer (src/rpc) mount on both connect-es's own stack and
 * flowlog's: one implementation whose request id picks the outcome, an interceptor that marks its
 * answers, and options with small limits so that the cases reach them.
 */
export const readMaxBytes = 1024;
export const compressMinBytes = 512;

export const interceptor: Interceptor = (next) => async (request) => {
  const response = await next(request);
  response.header.set("x-intercepted", request.method.name);
  return response;
};

/**
 * An error's metadata that names protocol headers beside one of its own (`x-kept`). connect-es 2.1
 * relays them all, protocol headers included; 2.2 stops relaying the protocol ones (connect-es #1717).
 */
export const protocolMetadata = {
  "content-type": "text/html",
  "content-encoding": "gzip",
  "grpc-status": "0",
  "grpc-message": "forged",
  "connect-timeout-ms": "1",
  "trailer-forged": "yes",
  "x-kept": "kept",
};

export function routes(router: ConnectRouter): ConnectRouter {
  return router.service(LogsService, {
    async getLog(request, context) {
      context.responseTrailer.set("x-trailer", "set by the handler");
      // Waits out the client's deadline: the call's signal aborts with the reason it is answered with.
      if (request.id === "slow") {
        await new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
        throw ConnectError.from(context.signal.reason);
      }
      context.responseHeader.set("x-deadline", context.timeoutMs() === undefined ? "none" : "set");
      // Trailers past compressMinBytes: gRPC-Web compresses their envelope like a message's.
      if (request.id === "long trailer") context.responseTrailer.set("x-long", "t".repeat(compressMinBytes));
      switch (request.id) {
        case "invalid":
          throw invalidArgument([{ field: "id", message: "id is not a log id" }]);
        case "throttled":
          throw new ConnectError("too many requests", Code.ResourceExhausted, { "retry-after": "7" });
        case "protocol metadata":
          throw new ConnectError("refused", Code.FailedPrecondition, protocolMetadata);
        case "fault":
          throw new Error("a fault that must not leave the server");
        default:
          return { data: { id: request.id, workflowId: "wf_1", level: "info" } };
      }
    },
    listLogs(request) {
      return create(ListLogsResponseSchema, {
        data: Array.from({ length: request.limit ?? 0 }, (_, i) => ({ id: `log_${i}`, workflowId: "wf_1" })),
      });
    },
  });
}

export const differentialOptions = {
  ...answerSerialization,
  interceptors: [interceptor],
  acceptCompression: [compressionGzip],
  readMaxBytes,
  compressMinBytes,
};

type Listener = (req: NodeRequest, res: NodeResponse) => void;
export type Transport = "HTTP/1.1" | "HTTP/2";

/** Both adapters' fallback, typed for connect-node's response and flowlog's alike. */
function notFound(_req: unknown, res: { writeHead(status: number): unknown; end(): unknown }): void {
  res.writeHead(404);
  res.end();
}

/**
 * The two servers a differential test compares, over one transport (HTTP/2 without TLS, as gRPC clients
 * speak it on the one port): `routes` mounted by connect-es alone (`connectNodeAdapter`, which builds
 * `createConnectRouter`), and by flowlog's RPC layer (its router and its Node adapter), so that an upgrade
 * of connect-es that changes what goes on the wire shows as a difference.
 */
export async function startDifferentialServers(
  transport: Transport,
): Promise<{ connectUrl: string; flowlogUrl: string; close(): void }> {
  const servers: (http.Server | http2.Http2Server)[] = [];
  const serve = async (listener: Listener): Promise<string> => {
    const server = transport === "HTTP/2" ? http2.createServer(listener) : http.createServer(listener);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const flowlog = routes(createRouter(differentialOptions));
  return {
    connectUrl: await serve(connectNodeAdapter({ ...differentialOptions, routes, fallback: notFound })),
    flowlogUrl: await serve(
      createNodeListener({
        handlers: flowlog.handlers,
        fallback: notFound,
        contextValues: () => createContextValues(),
      }),
    ),
    close() {
      for (const server of servers) server.close();
    },
  };
}

/**
 * Both servers for each transport, started before the file's tests and closed after them: `urls(transport)`
 * gives the pair a case is sent to.
 */
export function differentialServersFor(transports: readonly Transport[]) {
  const servers = new Map<Transport, Awaited<ReturnType<typeof startDifferentialServers>>>();
  beforeAll(async () => {
    for (const transport of transports) servers.set(transport, await startDifferentialServers(transport));
  });
  afterAll(() => {
    for (const server of servers.values()) server.close();
  });
  return function urls(transport: Transport) {
    const started = servers.get(transport);
    if (!started) throw new Error(`no servers over ${transport}`);
    return started;
  };
}

/** A request as a case sends it. */
export interface Sent {
  path: string;
  method?: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** The body sent in these pieces (over HTTP/1.1 chunked, with no content-length). */
  pieces?: Uint8Array[];
}

/** What came back, less the date and the connection's own headers; the body in base64. */
export interface Answered {
  status: number;
  headers: Record<string, unknown>;
  body: string;
  trailers: Record<string, unknown>;
}

/** Or how the exchange failed: a server that stops reading a body too large may end the connection. */
export type Exchange = Answered | { failed: string };

/** One request as given, over the transport; every request on a connection of its own. */
export function call(transport: Transport, url: string, sent: Sent): Promise<Exchange> {
  return transport === "HTTP/2" ? callOverHttp2(url, sent) : callOverHttp1(url, sent);
}

function callOverHttp1(
  url: string,
  { path, method = "POST", headers, body, pieces }: Sent,
): Promise<Exchange> {
  return new Promise((resolve) => {
    const failed = (error: NodeJS.ErrnoException) => resolve({ failed: error.code ?? error.message });
    const request = http.request(`${url}${path}`, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const { date: _date, connection: _connection, "keep-alive": _keepAlive, ...rest } = response.headers;
        resolve({
          status: response.statusCode ?? 0,
          headers: rest,
          body: Buffer.concat(chunks).toString("base64"),
          trailers: { ...response.trailers },
        });
      });
      response.on("error", failed);
    });
    request.on("error", failed);
    for (const piece of pieces ?? []) request.write(piece);
    request.end(body);
  });
}

function callOverHttp2(
  url: string,
  { path, method = "POST", headers, body, pieces }: Sent,
): Promise<Exchange> {
  return new Promise((resolve) => {
    const failed = (error: NodeJS.ErrnoException) => resolve({ failed: error.code ?? error.message });
    const session = http2.connect(url);
    session.on("error", failed);
    const stream = session.request({ ":method": method, ":path": path, ...headers });
    const exchange: Answered = { status: 0, headers: {}, body: "", trailers: {} };
    const chunks: Buffer[] = [];
    stream.on("response", (received) => {
      const { date: _date, ...rest } = received;
      exchange.status = Number(received[":status"]);
      exchange.headers = rest;
    });
    stream.on("trailers", (received) => {
      exchange.trailers = { ...received };
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("close", () => {
      session.close();
      exchange.body = Buffer.concat(chunks).toString("base64");
      resolve(exchange);
    });
    stream.on("error", failed);
    for (const piece of pieces ?? []) stream.write(piece);
    stream.end(body);
  });
}

/** A case's answers from flowlog, by its name, for the checks that the cases reach what they name. */
export async function flowlogAnswers(
  transport: Transport,
  url: string,
  cases: readonly (readonly [string, () => Promise<Sent>])[],
): Promise<Map<string, Answered>> {
  const seen = new Map<string, Answered>();
  for (const [name, build] of cases) {
    const exchange = await call(transport, url, await build());
    if ("status" in exchange) seen.set(name, exchange);
  }
  return seen;
}
