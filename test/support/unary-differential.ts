import type http from "node:http";
import type http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createConnectRouter,
  type Interceptor,
} from "@connectrpc/connect";
import {
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import { ListLogsResponseSchema, LogsService } from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { invalidArgument } from "../../src/errors/api-errors.js";
import { answerSerialization } from "../../src/rpc/answer-serialization.js";
import type { NodeRequest, NodeResponse } from "../../src/rpc/node-http.js";
import { createRouter } from "../../src/rpc/router.js";

/**
 * What the differential tests of flowlog's unary handlers (grpc-unary, and the router's Connect) mount on both
 * Connect's router and flowlog's: one implementation whose request id picks the outcome, an interceptor
 * that marks its answers, and options with small limits so that the cases reach them.
 */
export const readMaxBytes = 1024;
export const compressMinBytes = 512;

export const interceptor: Interceptor = (next) => async (request) => {
  const response = await next(request);
  response.header.set("x-intercepted", request.method.name);
  return response;
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

/** node:http for the Connect protocol, node:http2 (h2c) for gRPC and gRPC-Web. */
type CreateServer = (
  listener: (req: NodeRequest, res: NodeResponse) => void,
) => http.Server | http2.Http2Server;

/**
 * The two servers a differential test compares: `routes` mounted through Connect's router and through
 * flowlog's, each served by connect-node's own adapter, so the protocol handlers are all that differ.
 */
export async function startDifferentialServers(
  createServer: CreateServer,
): Promise<{ connectUrl: string; flowlogUrl: string; close(): void }> {
  const servers: (http.Server | http2.Http2Server)[] = [];
  const serve = async (router: ConnectRouter): Promise<string> => {
    const byPath = new Map(router.handlers.map((h) => [h.requestPath, h]));
    const server = createServer((req, res) => {
      const handler = byPath.get(req.url?.split("?", 1)[0] ?? "");
      if (!handler) {
        res.writeHead(404);
        res.end();
        return;
      }
      handler(universalRequestFromNodeRequest(req, res, undefined, undefined))
        .then((response) => universalResponseToNodeResponse(response, res))
        .catch(() => res.destroy());
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  return {
    connectUrl: await serve(routes(createConnectRouter(differentialOptions))),
    flowlogUrl: await serve(routes(createRouter(differentialOptions))),
    close() {
      for (const server of servers) server.close();
    },
  };
}
