import { readFileSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ListLogsRequest,
  ListLogsResponseSchema,
  LogsService,
} from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { WorkflowsService } from "../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { BadRequestSchema } from "../gen/google/rpc/error_details_pb.js";
import { invalidArgument } from "../src/errors/api-errors.js";
import type { ApiServer } from "../src/server/api-server.js";
import type { ApiImplementations } from "../src/server/api-services.js";
import { openApiDocumentPath } from "../src/server/openapi-document.js";
import { setRestStatus } from "../src/services/rest-status.js";
import { rest, rpcClients, rpcError, startTestApiServer } from "./support/api-server.js";

// Test handlers drive the real server: each workspaceId selects an outcome, so every protocol
// can be shown to carry the same result through the same interceptors.
const received: ListLogsRequest[] = [];
const implementations: ApiImplementations = {
  logs: {
    listLogs(request, context) {
      received.push(request);
      context.responseHeader.set("x-ratelimit-limit", "30");
      context.responseHeader.set("x-seen-api-key", context.requestHeader.get("x-api-key") ?? "");
      if (request.workspaceId === "invalid") {
        throw invalidArgument([{ field: "limit", message: "limit must be an integer from 1 to 1000" }]);
      }
      if (request.workspaceId === "fault")
        throw new Error("SQLITE_CORRUPT in /var/lib/secret.db password=hunter2");
      return create(ListLogsResponseSchema, {
        data: [
          {
            id: "log_1",
            workflowId: "wf_1",
            executionId: "ex_1",
            level: "info",
            trigger: "api",
            startedAt: "2026-01-02T03:04:05.000Z",
            endedAt: "2026-01-02T03:04:05.000Z",
            totalDurationMs: 0,
            cost: { total: 0 },
            files: { kind: { case: "nullValue", value: 0 } },
          },
        ],
        limits: {
          workflowExecutionRateLimit: { syncExecutions: {}, asyncExecutions: {} },
          usage: { plan: "free" },
        },
      });
    },
  },
  workflows: {
    // Answers once its signal aborts: what it saw is kept, for the cancellation test.
    async getWorkflow(request, context) {
      calls.get(request.id)?.entered();
      const aborted = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 5_000);
        context.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      calls.get(request.id)?.ended(aborted);
      return { workflow: { id: request.id } };
    },
    updateWorkflow(request, context) {
      signals.push(context.signal);
      if (request.name === "accepted") setRestStatus(context, 202);
      return {
        workflow: { id: request.id, name: request.name ?? "", description: request.description ?? "" },
      };
    },
  },
};

const signals: AbortSignal[] = [];
const calls = new Map<string, { entered(): void; ended(aborted: boolean): void }>();

let server: ApiServer;
beforeAll(async () => {
  server = await startTestApiServer({ implementations });
});
afterAll(() => server.close());

describe("one port, every protocol (D2)", () => {
  it("answers the same call over gRPC, gRPC-Web, Connect JSON and Connect binary", async () => {
    for (const [, client] of rpcClients(LogsService, server.url)) {
      const response = await client.listLogs({ workspaceId: "ok" });
      expect(response.data[0]?.id).toBe("log_1");
    }
  });

  it("cancels the call over every RPC protocol when the client leaves before its answer", async () => {
    for (const [name, client] of rpcClients(WorkflowsService, server.url)) {
      let entered!: () => void;
      const inHandler = new Promise<void>((resolve) => (entered = resolve));
      const id = `wf_leaves_${name}`;
      const sawAbort = new Promise<boolean>((resolve) => calls.set(id, { entered, ended: resolve }));
      const leaving = new AbortController();
      const call = client.getWorkflow({ id }, { signal: leaving.signal });
      await inHandler;
      leaving.abort();
      await expect(call, name).rejects.toThrow();
      expect(await sawAbort, name).toBe(true);
    }
  });

  it("answers REST over HTTP/1.1 and HTTP/2 with the same bytes as Connect JSON", async () => {
    const h1 = await rest(server.url, "/api/v1/logs?workspaceId=ok");
    const h2 = await rest(server.url, "/api/v1/logs?workspaceId=ok", { http2: true });
    const connect = await rest(server.url, "/flowlog.logs.v1.LogsService/ListLogs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ workspaceId: "ok" }),
    });
    expect(h1.status).toBe(200);
    expect(h1.headers["content-type"]).toBe("application/json");
    expect(h2.status).toBe(200);
    expect(h2.text).toBe(h1.text);
    expect(connect.text).toBe(h1.text);
  });

  it("gives an unimplemented RPC the same code everywhere, 501 problem+json on REST", async () => {
    for (const [name, client] of rpcClients(LogsService, server.url)) {
      const error = await rpcError(() => client.getLog({ id: "x" }));
      expect(error.code, name).toBe(Code.Unimplemented);
    }
    const response = await rest(server.url, "/api/v1/logs/x");
    expect(response.status).toBe(501);
    expect(response.headers["content-type"]).toBe("application/problem+json");
    expect(response.json).toMatchObject({
      type: "about:blank",
      title: "Not Implemented",
      status: 501,
      code: "unimplemented",
    });
  });

  it("gives an invalid call invalid_argument with the same field violations everywhere (D10)", async () => {
    for (const [name, client] of rpcClients(LogsService, server.url)) {
      const error = await rpcError(() => client.listLogs({ workspaceId: "invalid" }));
      expect(error.code, name).toBe(Code.InvalidArgument);
      const violations = error.findDetails(BadRequestSchema).flatMap((d) => d.fieldViolations);
      expect(
        violations.map((v) => v.field),
        name,
      ).toEqual(["limit"]);
    }
    const response = await rest(server.url, "/api/v1/logs?workspaceId=invalid");
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      type: "about:blank",
      title: "Bad Request",
      status: 400,
      detail: "limit must be an integer from 1 to 1000",
      code: "invalid_argument",
      errors: [{ field: "limit", message: "limit must be an integer from 1 to 1000" }],
    });
  });

  it("refuses a request without a field the .proto marks REQUIRED, naming it, on every protocol", async () => {
    for (const [name, client] of rpcClients(LogsService, server.url)) {
      const error = await rpcError(() => client.listLogs({}));
      expect(error.code, name).toBe(Code.InvalidArgument);
      expect(error.rawMessage, name).toBe("workspaceId is required");
    }
    const response = await rest(server.url, "/api/v1/logs?limit=5");
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({
      errors: [{ field: "workspaceId", message: "workspaceId is required" }],
    });
  });

  it("turns an unexpected fault into internal with no internals on every protocol", async () => {
    for (const [name, client] of rpcClients(LogsService, server.url)) {
      const error = await rpcError(() => client.listLogs({ workspaceId: "fault" }));
      expect(error.code, name).toBe(Code.Internal);
      expect(error.message, name).not.toMatch(/SQLITE|secret|hunter2/);
    }
    const response = await rest(server.url, "/api/v1/logs?workspaceId=fault");
    expect(response.status).toBe(500);
    expect(response.text).not.toMatch(/SQLITE|secret|hunter2/);
    expect(response.json).toMatchObject({ status: 500, code: "internal" });
  });

  it("passes request headers to the handler and its response headers back on every protocol", async () => {
    for (const [name, client] of rpcClients(LogsService, server.url)) {
      let limit: string | null = null;
      await client.listLogs(
        { workspaceId: "ok" },
        { headers: { "x-api-key": "flk_test" }, onHeader: (h) => (limit = h.get("x-ratelimit-limit")) },
      );
      expect(limit, name).toBe("30");
    }
    const response = await rest(server.url, "/api/v1/logs?workspaceId=ok", {
      headers: { "x-api-key": "flk_test" },
    });
    expect(response.headers["x-ratelimit-limit"]).toBe("30");
    expect(response.headers["x-seen-api-key"]).toBe("flk_test");
  });
});

describe("REST/JSON gateway from google.api.http annotations", () => {
  it("emits implicit values, null files and leaves out an unset nextCursor (D7)", async () => {
    const response = await rest(server.url, "/api/v1/logs?workspaceId=ok");
    const body = response.json as Record<string, unknown>;
    expect(body).not.toHaveProperty("nextCursor");
    expect(body.data).toEqual([
      expect.objectContaining({
        totalDurationMs: 0,
        cost: expect.objectContaining({ total: 0 }),
        files: null,
      }),
    ]);
    expect(body.limits).toMatchObject({
      workflowExecutionRateLimit: {
        sync: { requestsPerMinute: 0, maxBurst: 0, remaining: 0, resetAt: "" },
        async: { requestsPerMinute: 0, maxBurst: 0, remaining: 0, resetAt: "" },
      },
      usage: { currentPeriodCost: 0, limit: 0, plan: "free", isExceeded: false },
    });
  });

  it("converts query parameters by field type: comma-separated lists, 1/0 booleans, numbers", async () => {
    received.length = 0;
    const query =
      "workspaceId=ok&workflowIds=wf_1,wf_2&workflowIds=wf_3&triggers=api&includeTraceSpans=1" +
      "&includeFinalOutput=false&minCost=0.5&minDurationMs=10&limit=7&order=asc&somethingElse=ignored";
    const response = await rest(server.url, `/api/v1/logs?${query}`);
    expect(response.status).toBe(200);
    expect(received[0]).toMatchObject({
      workspaceId: "ok",
      workflowIds: ["wf_1", "wf_2", "wf_3"],
      triggers: ["api"],
      includeTraceSpans: true,
      includeFinalOutput: false,
      minCost: 0.5,
      minDurationMs: 10,
      limit: 7,
      order: "asc",
    });
    expect(received[0]?.maxCost).toBeUndefined();
  });

  it("refuses values that do not fit their field with a 400 naming each parameter", async () => {
    received.length = 0;
    const response = await rest(
      server.url,
      "/api/v1/logs?workspaceId=ok&limit=ten&includeTraceSpans=yes&minCost=cheap&minDurationMs=-5&limit=3",
    );
    expect(response.status).toBe(400);
    const problem = response.json as { errors: { field: string; message: string }[] };
    expect(problem.errors.map((e) => e.field).sort()).toEqual([
      "includeTraceSpans",
      "limit",
      "minCost",
      "minDurationMs",
    ]);
    expect(problem.errors.find((e) => e.field === "includeTraceSpans")?.message).toBe(
      "includeTraceSpans must be true, false, 1 or 0",
    );
    expect(received).toHaveLength(0);
  });

  it("fills path variables and the JSON body of a route that has one", async () => {
    const response = await rest(server.url, "/api/v1/workflows/wf%2F1", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "ignored-by-path", name: "Nightly", description: "runs at night" }),
    });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      workflow: { id: "wf/1", name: "Nightly", description: "runs at night" },
    });
  });

  it("cancels the call when the client leaves before its answer, and ends a call's signal once answered", async () => {
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    const sawAbort = new Promise<boolean>((resolve) => calls.set("wf_leaves", { entered, ended: resolve }));
    const client = new AbortController();
    const request = fetch(`${server.url}/api/v1/workflows/wf_leaves`, { signal: client.signal });
    await inHandler;
    client.abort();
    await expect(request).rejects.toThrow();
    expect(await sawAbort).toBe(true);

    signals.length = 0;
    const answered = await rest(server.url, "/api/v1/workflows/wf_1", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "kept" }),
    });
    expect(answered.status).toBe(200);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
  });

  it("answers with the success status a handler sets for REST, e.g. 202 for accepted work (D15)", async () => {
    const response = await rest(server.url, "/api/v1/workflows/wf_1", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "accepted" }),
    });
    expect(response.status).toBe(202);
    expect(response.json).toMatchObject({ workflow: { id: "wf_1", name: "accepted" } });
    for (const [, client] of rpcClients(WorkflowsService, server.url)) {
      expect((await client.updateWorkflow({ id: "wf_1", name: "accepted" })).workflow?.name).toBe("accepted");
    }
  });

  it("refuses a body that is not JSON or has unknown fields, naming it", async () => {
    const notJson = await rest(server.url, "/api/v1/workflows/wf_1", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: "{name:",
    });
    expect(notJson.status).toBe(400);
    expect(notJson.json).toMatchObject({ errors: [{ field: "body", message: "body is not valid JSON" }] });
    const unknown = await rest(server.url, "/api/v1/workflows/wf_1", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ nmae: "typo" }),
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json).toMatchObject({ code: "invalid_argument", errors: [{ field: "nmae" }] });
    const wrongType = await rest(server.url, "/api/v1/workflows/wf_1", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: 918273645 }),
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json).toMatchObject({ errors: [{ field: "name" }] });
    // A value sent to the wrong field may be a secret: it never comes back in the error (D24).
    expect(wrongType.text).not.toContain("918273645");
  });

  it("serves the generated OpenAPI document at /api/v1/openapi.json", async () => {
    const response = await rest(server.url, "/api/v1/openapi.json");
    expect(response.status).toBe(200);
    expect(response.text).toBe(readFileSync(openApiDocumentPath, "utf8"));
  });

  it("answers 405 with Allow for a known path and another method, 404 problem+json for no route", async () => {
    const wrongMethod = await rest(server.url, "/api/v1/logs", { method: "DELETE" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe("GET");
    expect(wrongMethod.json).toMatchObject({ status: 405, title: "Method Not Allowed" });
    const missing = await rest(server.url, "/api/v1/nothing-here");
    expect(missing.status).toBe(404);
    expect(missing.headers["content-type"]).toBe("application/problem+json");
  });

  it("serves the workflows service's REST routes as annotated, with no hand routing", async () => {
    for (const [, client] of rpcClients(WorkflowsService, server.url)) {
      const response = await client.updateWorkflow({ id: "wf_9", name: "n" });
      expect(response.workflow?.id).toBe("wf_9");
    }
  });
});
