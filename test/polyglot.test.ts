import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogsService } from "../clients/typescript/src/gen/flowlog/logs/v1/logs_service_pb.js";
import { createFlowlogClient } from "../clients/typescript/src/index.js";
import { ListLogsResponseSchema } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { invalidArgument } from "../src/errors/api-errors.js";
import type { ApiServer } from "../src/server/api-server.js";
import { startTestApiServer } from "./support/api-server.js";
import { resolveGrpcurl } from "./support/grpcurl.js";
import { ensurePythonClient, ensurePythonGrpc } from "./support/python.js";

const run = promisify(execFile);

// Internal services call flowlog from many languages over gRPC, with no copy of our .proto files:
// these tests use the clients such users reach for, discovering the API by server reflection.
let server: ApiServer;
let target: string;
let grpcurlPath: string;
let python: string;
let pythonClient: string;
let goClient: string;
const goBuildDir = mkdtempSync(path.join(tmpdir(), "flowlog-go-client-"));

beforeAll(async () => {
  server = await startTestApiServer({
    implementations: {
      logs: {
        listLogs(request, context) {
          context.responseHeader.set("x-ratelimit-limit", "30");
          if (request.workspaceId === "invalid") {
            throw invalidArgument([{ field: "limit", message: "limit must be an integer from 1 to 1000" }]);
          }
          const apiKey = context.requestHeader.get("x-api-key") ?? "";
          return create(ListLogsResponseSchema, {
            data: [
              { id: `log_for_${apiKey}`, workflowId: "wf_1", totalDurationMs: 1500, cost: { total: 0.25 } },
            ],
          });
        },
      },
    },
  });
  target = `127.0.0.1:${server.port}`;
  [grpcurlPath, python] = await Promise.all([resolveGrpcurl(), Promise.resolve(ensurePythonGrpc())]);
  pythonClient = ensurePythonClient();
  goClient = path.join(goBuildDir, "go-client");
  await run("go", ["build", "-o", goClient, "."], {
    cwd: path.join(import.meta.dirname, "polyglot", "go-client"),
  });
}, 600_000);
afterAll(async () => {
  await server.close();
  rmSync(goBuildDir, { recursive: true, force: true });
});

const apiServices = [
  "flowlog.admin.v1.AdminService",
  "flowlog.logs.v1.LogsService",
  "flowlog.notifications.v1.DeliveriesService",
  "flowlog.notifications.v1.NotificationsService",
  "flowlog.workflows.v1.TriggersService",
  "flowlog.workflows.v1.WorkflowsService",
];

describe("grpcurl, by server reflection", () => {
  it("lists every service, health and reflection v1 and v1alpha included", async () => {
    const { stdout } = await run(grpcurlPath, ["-plaintext", target, "list"]);
    expect(stdout.trim().split("\n")).toEqual([
      ...apiServices,
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
    ]);
  });

  it("describes a message with the field names of the .proto", async () => {
    const entry = await run(grpcurlPath, ["-plaintext", target, "describe", "flowlog.logs.v1.LogEntry"]);
    expect(entry.stdout).toContain("uint32 total_duration_ms = 8;");
    const cost = await run(grpcurlPath, ["-plaintext", target, "describe", "flowlog.logs.v1.Cost"]);
    expect(cost.stdout).toContain("map<string, .flowlog.logs.v1.ModelCost> models = 3");
  });

  it("calls LogsService/ListLogs with the key as metadata", async () => {
    const { stdout } = await run(grpcurlPath, [
      "-plaintext",
      ...["-H", "x-api-key: flk_grpcurl"],
      ...["-d", JSON.stringify({ workspace_id: "ws_1" })],
      target,
      "flowlog.logs.v1.LogsService/ListLogs",
    ]);
    expect(JSON.parse(stdout)).toMatchObject({
      data: [{ id: "log_for_flk_grpcurl", totalDurationMs: 1500 }],
    });
  });

  it("reports the same code as the other protocols for an invalid and an unimplemented call", async () => {
    const invalid = await run(grpcurlPath, [
      "-plaintext",
      ...["-d", JSON.stringify({ workspace_id: "invalid" })],
      target,
      "flowlog.logs.v1.LogsService/ListLogs",
    ]).catch((error: { stdout: string; stderr: string }) => error);
    expect("stderr" in invalid ? invalid.stderr + invalid.stdout : "").toContain("Code: InvalidArgument");
    const unimplemented = await run(grpcurlPath, [
      "-plaintext",
      ...["-d", JSON.stringify({ id: "log_1" })],
      target,
      "flowlog.logs.v1.LogsService/GetLog",
    ]).catch((error: { stdout: string; stderr: string }) => error);
    expect("stderr" in unimplemented ? unimplemented.stderr + unimplemented.stdout : "").toContain(
      "Code: Unimplemented",
    );
  });
});

describe("a Python grpcio client with no .proto files", () => {
  const client = path.join(import.meta.dirname, "polyglot", "grpc_client.py");

  async function callFromPython(method: string, request: object): Promise<Record<string, unknown>> {
    const args = [
      client,
      target,
      "flowlog.logs.v1.LogsService",
      method,
      JSON.stringify(request),
      "flk_python",
    ];
    const { stdout } = await run(python, args);
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  it("discovers the services by reflection and calls ListLogs, reading headers and fields", async () => {
    const result = await callFromPython("ListLogs", { workspaceId: "ws_1" });
    expect(result.services).toEqual(expect.arrayContaining(apiServices));
    expect(result.response).toMatchObject({ data: [{ id: "log_for_flk_python", cost: { total: 0.25 } }] });
    expect(result.headers).toMatchObject({ "x-ratelimit-limit": "30" });
  });

  it("gets the gRPC status codes the other protocols get", async () => {
    expect(await callFromPython("ListLogs", { workspaceId: "invalid" })).toMatchObject({
      error: { code: "INVALID_ARGUMENT", details: "limit must be an integer from 1 to 1000" },
    });
    expect(await callFromPython("ListLogs", {})).toMatchObject({
      error: { code: "INVALID_ARGUMENT", details: "workspaceId is required" },
    });
    expect(await callFromPython("GetLog", { id: "log_1" })).toMatchObject({
      error: { code: "UNIMPLEMENTED" },
    });
  });
});

// The client packages of clients/ (D49), as a service imports them: the same answers, headers and codes.
describe("flowlog's Python client package", () => {
  const client = path.join(import.meta.dirname, "polyglot", "client_call.py");

  async function call(method: string, request: object): Promise<Record<string, unknown>> {
    const args = [client, target, method, JSON.stringify(request), "flk_package"];
    const { stdout } = await run(pythonClient, args);
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  it("calls ListLogs with the key, reading the answer's fields and the headers", async () => {
    expect(await call("ListLogs", { workspaceId: "ws_1" })).toMatchObject({
      response: { data: [{ id: "log_for_flk_package", workflowId: "wf_1", cost: { total: 0.25 } }] },
      headers: { "x-ratelimit-limit": "30" },
    });
  });

  it("gets the gRPC status codes the other protocols get", async () => {
    expect(await call("ListLogs", { workspaceId: "invalid" })).toMatchObject({
      error: { code: "INVALID_ARGUMENT", details: "limit must be an integer from 1 to 1000" },
    });
    expect(await call("GetLog", { id: "log_1" })).toMatchObject({ error: { code: "UNIMPLEMENTED" } });
  });
});

describe.each(["connect", "grpc"] as const)("flowlog's TypeScript client package over %s", (protocol) => {
  it("calls ListLogs with the key, reading the answer's fields and the headers", async () => {
    const logs = createFlowlogClient(LogsService, {
      baseUrl: `http://${target}`,
      apiKey: "flk_ts",
      protocol,
    });
    let headers: Headers | undefined;
    const page = await logs.listLogs(
      { workspaceId: "ws_1" },
      { onHeader: (received) => (headers = received) },
    );
    expect(page.data.map((entry) => [entry.id, entry.totalDurationMs, entry.cost?.total])).toEqual([
      ["log_for_flk_ts", 1500, 0.25],
    ]);
    expect(headers?.get("x-ratelimit-limit")).toBe("30");
  });

  it("gets the same codes and messages as the other protocols", async () => {
    const logs = createFlowlogClient(LogsService, {
      baseUrl: `http://${target}`,
      apiKey: "flk_ts",
      protocol,
    });
    const invalid = await logs.listLogs({ workspaceId: "invalid" }).catch((error: unknown) => error);
    expect(ConnectError.from(invalid)).toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: "limit must be an integer from 1 to 1000",
    });
    const unimplemented = await logs.getLog({ id: "log_1" }).catch((error: unknown) => error);
    expect(ConnectError.from(unimplemented).code).toBe(Code.Unimplemented);
  });
});

describe.each(["grpc", "connect"])("flowlog's Go client module over %s", (protocol) => {
  async function call(method: string, request: object): Promise<Record<string, unknown>> {
    const args = [`http://${target}`, protocol, method, JSON.stringify(request), "flk_go"];
    const { stdout } = await run(goClient, args);
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  it("calls ListLogs with the key, reading the answer's fields and the headers", async () => {
    expect(await call("ListLogs", { workspaceId: "ws_1" })).toMatchObject({
      response: { data: [{ id: "log_for_flk_go", totalDurationMs: 1500, cost: { total: 0.25 } }] },
      headers: { "x-ratelimit-limit": "30" },
    });
  });

  it("gets the same codes and messages as the other protocols", async () => {
    expect(await call("ListLogs", { workspaceId: "invalid" })).toMatchObject({
      error: { code: "invalid_argument", message: "limit must be an integer from 1 to 1000" },
    });
    expect(await call("GetLog", { id: "log_1" })).toMatchObject({ error: { code: "unimplemented" } });
  });
});
