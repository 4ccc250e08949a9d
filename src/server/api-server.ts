import type { AddressInfo, Socket } from "node:net";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Config } from "../config/config.js";
import { listHttpRoutes } from "../gateway/http-rules.js";
import {
  createRestGateway,
  type NodeRequest,
  type NodeResponse,
  type RestGateway,
  writeProblem,
} from "../gateway/rest-gateway.js";
import { type ApiImplementations, apiServices, registerApiServices } from "./api-services.js";
import { createInterceptors } from "./interceptors.js";
import { createOnePortServer } from "./one-port.js";
import { loadOpenApiDocument } from "./openapi-document.js";
import { registerReflection } from "./reflection.js";

export interface ApiServer {
  /** Base URL with the port actually bound (useful when PORT is 0). */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves gRPC, gRPC-Web, Connect and the REST gateway on one port (D2). The Connect adapter
 * answers RPC paths; anything else falls through to the gateway, then to the OpenAPI document.
 */
export interface ApiServerOptions {
  /** Interface to bind; all interfaces when unset. */
  host?: string;
  implementations?: ApiImplementations;
  /** Authentication and rate limiting, run before the handlers on every protocol. */
  guards?: Interceptor[];
}

export async function startApiServer(
  config: Pick<Config, "port">,
  options: ApiServerOptions = {},
): Promise<ApiServer> {
  let handlers: UniversalHandler[] = [];
  const openApi = loadOpenApiDocument();
  let gateway: RestGateway | undefined;

  const adapter = connectNodeAdapter({
    interceptors: createInterceptors(options.guards),
    // Implicit values are always written (D7: totalDurationMs 0, cost.total 0 and isExceeded
    // false are facts, not omissions); REST bodies are these bytes too.
    jsonOptions: { alwaysEmitImplicit: true },
    routes(router) {
      registerApiServices(router, options.implementations ?? {});
      registerReflection(router, apiServices);
      handlers = router.handlers;
    },
    fallback: (req, res) => void fallback(req, res),
  });
  gateway = createRestGateway(listHttpRoutes(apiServices), handlers);

  async function fallback(req: NodeRequest, res: NodeResponse): Promise<void> {
    if (await gateway?.(req, res)) return;
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method === "GET" && path === "/api/v1/openapi.json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(openApi);
      return;
    }
    writeProblem(res, new ConnectError(`no route for ${req.method} ${path}`, Code.NotFound));
  }

  const server = createOnePortServer(adapter);
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://localhost:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive and HTTP/2 connections would hold close() open; in-flight requests have
        // had their chance by the time the process asks to stop.
        for (const socket of sockets) socket.destroy();
      }),
  };
}
