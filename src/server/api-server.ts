import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import { Health } from "../../gen/health/v1/health_pb.js";
import type { Config } from "../config/config.js";
import { toPublicError } from "../errors/public-error.js";
import { listHttpRoutes } from "../gateway/http-rules.js";
import { defaultCompressMinBytes } from "../gateway/response-encoding.js";
import { createRestGateway, type RestGateway, writeProblem } from "../gateway/rest-gateway.js";
import { defaultConnectionLimits, defaultQuotas } from "../limits/quotas.js";
import { logger } from "../logging/logger.js";
import type { ProcessMetrics } from "../logging/metrics.js";
import type { NodeRequest, NodeResponse } from "../rpc/node-http.js";
import { trustedProxies } from "../security/trusted-proxies.js";
import { requestBase, requestUrl } from "../util/request-url.js";
import { type ApiImplementations, apiServices, registerApiServices } from "./api-services.js";
import { type ConsoleSettings, loadConsoleAssets } from "./console-assets.js";
import { type FrontDoor, openDoor } from "./front-door.js";
import { registerGrpcHealth } from "./grpc-health.js";
import { createHealthRoutes, Readiness } from "./health.js";
import { listeningUrl, listenOn } from "./listen.js";
import { observedFrontDoor } from "./observed-front-door.js";
import { createOnePortServer } from "./one-port.js";
import { loadOpenApiDocument } from "./openapi-document.js";
import { operatorSurfaceGuard } from "./operator-surfaces.js";
import { registerReflection } from "./reflection.js";
import { clientAddressResolver, createRpcHandler } from "./rpc-handler.js";

export interface ApiServer {
  /** Base URL with the port actually bound (useful when PORT is 0). */
  url: string;
  port: number;
  /** Stops taking connections and waits up to `drainMs` (10 s) for the requests in flight, then closes. */
  close(drainMs?: number): Promise<void>;
}

/**
 * Serves gRPC, gRPC-Web, Connect and the REST gateway on one port (D2). The RPC handler answers RPC
 * paths; anything else falls through to the gateway, then to the OpenAPI document.
 */
export interface ApiServerOptions {
  implementations?: ApiImplementations;
  /** Authentication and the API rate limit, checked from the headers before a body is read (D28). */
  frontDoor?: FrontDoor;
  /** What `/readyz` checks (issue 16): the store and Temporal for `flowlog serve`; none means ready. */
  readiness?: Readiness;
  /** The process's Prometheus metrics (issue 16): `/metrics` answers them, and every request is counted. */
  metrics?: ProcessMetrics;
  /** The long-lived streams (D44's tails), ended when the server stops so their clients resume elsewhere. */
  streams?: { endAll(): void };
}

/** How long a stopping server waits for its requests in flight. */
const defaultDrainMs = 10_000;

export async function startApiServer(
  config: Pick<Config, "port"> &
    Partial<
      Pick<
        Config,
        "host" | "quotas" | "connections" | "compressMinBytes" | "trustedProxies" | "operatorToken"
      >
    > &
    ConsoleSettings,
  options: ApiServerOptions = {},
): Promise<ApiServer> {
  const openApi = loadOpenApiDocument();
  const door = options.frontDoor ?? openDoor;
  const frontDoor = options.metrics ? observedFrontDoor(door, options.metrics) : door;
  const quotas = config.quotas ?? defaultQuotas;
  const compressMinBytes = config.compressMinBytes ?? defaultCompressMinBytes;
  const isTrustedProxy = trustedProxies(config.trustedProxies ?? []);
  const clientAddress = clientAddressResolver(isTrustedProxy);

  const readiness = options.readiness ?? new Readiness([]);
  // Ends the gRPC health Watch streams when the server closes.
  const closing = new AbortController();
  const rpc = createRpcHandler({
    frontDoor,
    readMaxBytes: quotas.requestBodyBytes,
    compressMinBytes,
    routes(router) {
      registerApiServices(router, options.implementations ?? {});
      registerGrpcHealth(router, apiServices, readiness, closing.signal);
      registerReflection(router, [...apiServices, Health]);
    },
    fallback: (req, res) => void fallback(req, res).catch((error) => answerFault(req, res, error)),
    clientAddress,
  });
  const gateway: RestGateway = createRestGateway({
    routes: listHttpRoutes(apiServices),
    calls: rpc.jsonCalls,
    streamCalls: rpc.jsonStreamCalls,
    frontDoor,
    maxBodyBytes: quotas.requestBodyBytes,
    compressMinBytes,
    clientAddress,
  });

  const health = createHealthRoutes(readiness);
  const operatorOnly = operatorSurfaceGuard({
    operatorToken: config.operatorToken,
    clientAddress,
    isTrustedProxy,
  });
  const consoleAssets = loadConsoleAssets(compressMinBytes, config);

  async function fallback(req: NodeRequest, res: NodeResponse): Promise<void> {
    const url = requestUrl(req);
    const refusal = operatorOnly(req, url.pathname);
    if (refusal) {
      writeProblem(res, refusal);
      return;
    }
    if (
      (await health(req, res, url)) ||
      (await options.metrics?.answer(req, res, url)) ||
      (await gateway(req, res, url)) ||
      consoleAssets.answer(req, res, url)
    ) {
      return;
    }
    const path = url.pathname;
    if (req.method === "GET" && path === "/api/v1/openapi.json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(openApi);
      return;
    }
    writeProblem(res, new ConnectError(`no route for ${req.method} ${path}`, Code.NotFound));
  }

  const listener = options.metrics ? options.metrics.instrument(rpc.listener) : rpc.listener;
  // Requests not yet answered, which a graceful close waits for.
  let inFlight = 0;
  const handler: typeof listener = (req, res) => {
    inFlight++;
    res.once("close", () => inFlight--);
    // Every route reads the path from a URL made of the request target (request-url.ts); a target that is
    // no URL (`GET http://[ HTTP/1.1`, which Node's parser lets through) is refused here, once.
    if (!URL.canParse(req.url ?? "/", requestBase)) {
      writeProblem(res, new ConnectError("the request target is not a valid URL", Code.InvalidArgument));
      return;
    }
    try {
      listener(req, res);
    } catch (error) {
      answerFault(req, res, error);
    }
  };
  const { server, stopReuse } = createOnePortServer(handler, config.connections ?? defaultConnectionLimits);
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await listenOn(server, { port: config.port, host: config.host, variable: "PORT" });

  return {
    ...listeningUrl(server),
    async close(drainMs = defaultDrainMs) {
      // Issue 16: no new connection and no new request on a kept one (idle connections closed at once,
      // HTTP/2 sessions sent GOAWAY), the requests in flight answered (a load balancer has already sent
      // new ones to another replica), then whatever connection is left closed.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      stopReuse();
      options.streams?.endAll();
      closing.abort();
      const deadline = Date.now() + drainMs;
      while (inFlight > 0 && Date.now() < deadline) await sleep(25);
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/**
 * A fault that escaped a route: answered as D10's internal error under a logged incident id when nothing
 * was written yet, else logged and the connection cut. A request never takes the process down with it,
 * nor is left unanswered.
 */
function answerFault(req: NodeRequest, res: NodeResponse, error: unknown): void {
  const context = `${req.method} ${req.url?.split("?", 1)[0]}`;
  if (res.headersSent || res.writableEnded) {
    logger.error({ err: error, context }, "request failed after its answer began");
    res.destroy();
    return;
  }
  writeProblem(res, toPublicError(error, context));
}
