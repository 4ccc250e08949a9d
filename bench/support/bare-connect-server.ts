import { createServer } from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { LogsService } from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { answerSerialization } from "../../src/rpc/answer-serialization.js";
import { registerReflection } from "../../src/server/reflection.js";
import { createFloorService } from "./floor-service.js";

/**
 * The gateway bench's framework floor (issue 13): the floor's work (floor-service.ts) behind Connect-ES's
 * own Node adapter, with the generated LogsService and nothing else: no interceptor, validation,
 * authorization, limits object or metrics. Answers are written by flowlog's generated serialisers, the
 * cheapest writer there is. What any server that serves the `.proto` through Connect-ES's adapter pays at
 * least, over the Connect protocol on HTTP/1.1 and over gRPC on h2c, each on a port of its own.
 *
 *     node --import tsx bench/support/bare-connect-server.ts <data dir>
 */
const [dataDir] = process.argv.slice(2);
if (!dataDir) throw new Error("usage: bare-connect-server.ts <data dir>");

const floor = createFloorService(dataDir);

async function admit(context: HandlerContext): Promise<void> {
  if (!(await floor.admit(context.requestHeader.get("x-api-key") ?? ""))) {
    throw new ConnectError("unknown key or rate limited", Code.ResourceExhausted);
  }
}

function routes(router: ConnectRouter): void {
  router.service(LogsService, {
    async listLogs(request, context) {
      await admit(context);
      return floor.listLogs(request);
    },
    async getLog(request, context) {
      await admit(context);
      const answer = floor.getLog(request);
      if (!answer) throw new ConnectError("not found", Code.NotFound);
      return answer;
    },
  });
  registerReflection(router, [LogsService]);
}

const handler = connectNodeAdapter({ routes, ...answerSerialization });
const h1 = createServer(handler);
const h2 = http2.createServer(handler);
h1.listen(0, "127.0.0.1", () => {
  h2.listen(0, "127.0.0.1", () => {
    const port = (server: { address(): unknown }) => (server.address() as AddressInfo).port;
    console.log(`bare connect server on ports ${port(h1)} ${port(h2)}`);
  });
});
process.on("SIGTERM", () => {
  h1.close();
  h1.closeAllConnections();
  h2.close();
});
