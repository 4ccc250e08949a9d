import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { type DescMessage, fromBinary, type Message } from "@bufbuild/protobuf";
import {
  GetLogRequestSchema,
  GetLogResponseSchema,
  ListLogsRequestSchema,
  ListLogsResponseSchema,
} from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { answerSerializers } from "../../gen/flowlog/logs/v1/logs_service_serializers.js";
import { createFloorService } from "./floor-service.js";
import { enveloped } from "./grpc-envelope.js";

/**
 * The gateway bench's transport floor for gRPC (issue 13): the floor's work (floor-service.ts) behind
 * bare `node:http2`, the stream API, no framework at all. A unary call's one message is unwrapped from
 * its 5-byte envelope, the answer written by flowlog's generated serialisers into one, the status sent
 * in the trailers. No compression, deadlines, metadata or error details: what Node's HTTP/2 and a gRPC
 * envelope cost, and nothing a server could drop. It serves no reflection, so ghz reads the services
 * from a descriptor set (`buf build`).
 *
 *     node --import tsx bench/support/bare-grpc-server.ts <data dir>
 */
const [dataDir] = process.argv.slice(2);
if (!dataDir) throw new Error("usage: bare-grpc-server.ts <data dir>");

const floor = createFloorService(dataDir);

const methods = new Map<string, (body: Uint8Array) => Message | undefined>([
  [
    "/flowlog.logs.v1.LogsService/ListLogs",
    (body) => floor.listLogs(fromBinary(ListLogsRequestSchema, body)),
  ],
  ["/flowlog.logs.v1.LogsService/GetLog", (body) => floor.getLog(fromBinary(GetLogRequestSchema, body))],
]);
const answerSchemas = new Map<string, DescMessage>([
  ["/flowlog.logs.v1.LogsService/ListLogs", ListLogsResponseSchema],
  ["/flowlog.logs.v1.LogsService/GetLog", GetLogResponseSchema],
]);

const server = http2.createServer();
server.on("stream", (stream, headers) => {
  const path = String(headers[":path"]);
  const method = methods.get(path);
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  // A stream the client resets errors; the call is over, and the server goes on.
  stream.on("error", () => {});
  stream.on("end", () => {
    answer().catch((error: unknown) => {
      console.error(error);
      stream.destroy();
    });
  });
  // A call ghz cancels when its time is up leaves a closed stream, not one to answer.
  async function answer(): Promise<void> {
    const status = (code: number) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": String(code) }));
    };
    const schema = answerSchemas.get(path);
    if (!method || !schema) {
      status(12); // UNIMPLEMENTED
      stream.end();
      return;
    }
    const admitted = await floor.admit(String(headers["x-api-key"] ?? ""));
    if (stream.closed) return;
    if (!admitted) {
      status(8); // RESOURCE_EXHAUSTED
      stream.end();
      return;
    }
    const reply = method(Buffer.concat(chunks).subarray(5));
    if (!reply) {
      status(5); // NOT_FOUND
      stream.end();
      return;
    }
    const message = answerSerializers.get(schema.typeName)?.binary(reply) ?? new Uint8Array();
    status(0);
    stream.end(enveloped(message));
  }
});
server.listen(0, "127.0.0.1", () => {
  console.log(`bare grpc server on port ${(server.address() as AddressInfo).port}`);
});
process.on("SIGTERM", () => server.close());
