import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogsService } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { BadRequestSchema } from "../gen/google/rpc/error_details_pb.js";
import { rest, rpcClients, rpcError } from "./support/api-server.js";
import {
  createAccount,
  createWorkflow,
  execution,
  startFlowlog,
  steppingClock,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { isoMs } from "./support/formats.js";

let flowlog: TestFlowlog;
let alice: TestAccount;
let bob: TestAccount;
let aliceWorkflow: string;
let bobLogId: string;
let bobExecutionId: string;

beforeAll(async () => {
  flowlog = await startFlowlog({ clock: steppingClock() });
  alice = await createAccount(flowlog.store, "enterprise");
  bob = await createAccount(flowlog.store, "pro");
  aliceWorkflow = await createWorkflow(flowlog.store, alice.workspaceId, "Nightly report");
  const start = Date.parse("2026-11-01T00:00:00.000Z");
  // 150 executions, in bursts of three sharing one startedAt (D8 must page through ties).
  await flowlog.store.logs.insertExecutions(
    Array.from({ length: 150 }, (_, i) =>
      execution(alice, aliceWorkflow, {
        startedAt: start + Math.floor(i / 3) * 60_000,
        level: i % 10 === 0 ? "error" : "info",
      }),
    ),
  );
  const bobs = execution(bob, await createWorkflow(flowlog.store, bob.workspaceId, "Bob's flow"));
  await flowlog.store.logs.insertExecution(bobs);
  bobLogId = bobs.entry.id;
  bobExecutionId = bobs.entry.executionId;
});
afterAll(() => flowlog.close());

/** A GET with Alice's key unless another key, or none (null), is given. */
const get = (path: string, key: string | null = alice.key) =>
  rest(flowlog.server.url, path, { headers: key === null ? {} : { "x-api-key": key } });

type Json = Record<string, unknown>;

describe("GET /api/v1/logs: the spec's list form", () => {
  it("returns every list-form field with its JSON type and ISO timestamps with milliseconds (D7)", async () => {
    const response = await get(`/api/v1/logs?workspaceId=${alice.workspaceId}&limit=5`);
    expect(response.status).toBe(200);
    const body = response.json as { data: Json[]; nextCursor: string; limits: Json };
    expect(body.data).toHaveLength(5);
    for (const entry of body.data) {
      expect(typeof entry.id).toBe("string");
      expect(entry.workflowId).toBe(aliceWorkflow);
      expect(typeof entry.executionId).toBe("string");
      expect(["info", "error"]).toContain(entry.level);
      expect(entry.trigger).toBe("api");
      expect(entry.startedAt).toMatch(isoMs);
      expect(entry.endedAt).toMatch(isoMs);
      expect(entry.totalDurationMs).toBe(1234);
      expect((entry.cost as Json).total).toBe(0.0123);
      expect(entry.files).toBeNull();
      // D9: basic leaves out the workflow, the token counts and the execution data.
      expect(entry).not.toHaveProperty("workflow");
      expect(entry.cost).not.toHaveProperty("tokens");
      expect(entry).not.toHaveProperty("executionData");
    }
    expect(typeof body.nextCursor).toBe("string");
  });

  it("defaults to 100 rows, newest first", async () => {
    const body = (await get(`/api/v1/logs?workspaceId=${alice.workspaceId}`)).json as { data: Json[] };
    expect(body.data).toHaveLength(100);
    const started = body.data.map((e) => Date.parse(e.startedAt as string));
    expect(started).toEqual([...started].sort((a, b) => b - a));
  });

  it("carries the limits object with the spec's fields and types (D12)", async () => {
    const body = (await get(`/api/v1/logs?workspaceId=${alice.workspaceId}&limit=1`)).json as {
      limits: Json;
    };
    const rateLimits = body.limits.workflowExecutionRateLimit as Record<string, Json>;
    for (const bucket of [rateLimits.sync, rateLimits.async]) {
      expect(Number.isInteger(bucket?.requestsPerMinute)).toBe(true);
      expect(Number.isInteger(bucket?.maxBurst)).toBe(true);
      expect(Number.isInteger(bucket?.remaining)).toBe(true);
      expect(bucket?.resetAt).toMatch(isoMs);
    }
    expect(rateLimits.sync).toMatchObject({ requestsPerMinute: 120, maxBurst: 240 });
    expect(rateLimits.async).toMatchObject({ requestsPerMinute: 600, maxBurst: 1200 });
    expect(body.limits.usage).toMatchObject({ plan: "enterprise", limit: 5000, isExceeded: false });
    expect(typeof (body.limits.usage as Json).currentPeriodCost).toBe("number");
  });

  it("adds workflow and the full cost with details=full, and execution data only when asked (D9)", async () => {
    const full = (await get(`/api/v1/logs?workspaceId=${alice.workspaceId}&limit=1&details=full`)).json as {
      data: Json[];
    };
    expect(full.data[0]).toMatchObject({
      workflow: { id: aliceWorkflow, name: "Nightly report", description: "Nightly report, for tests" },
      cost: {
        total: 0.0123,
        tokens: { prompt: 100, completion: 50, total: 150 },
        models: {
          "gpt-4o": {
            input: 0.0073,
            output: 0.005,
            total: 0.0123,
            tokens: { prompt: 100, completion: 50, total: 150 },
          },
        },
      },
    });
    expect(full.data[0]).not.toHaveProperty("executionData");
    const withSpans = (
      await get(
        `/api/v1/logs?workspaceId=${alice.workspaceId}&limit=1&includeTraceSpans=true&includeFinalOutput=1`,
      )
    ).json as { data: Json[] };
    expect(withSpans.data[0]?.executionData).toMatchObject({
      traceSpans: [{ id: "span_1", name: "API", type: "api", status: "success", durationMs: 1234 }],
      finalOutput: { items: 3 },
    });
    const [entry] = withSpans.data as { executionData: { traceSpans: Json[] } }[];
    expect(entry?.executionData.traceSpans[0]?.startTime).toMatch(isoMs);
  });

  it("pages through equal startedAt values in both orders, every row once, nextCursor absent at the end (D8)", async () => {
    for (const order of ["desc", "asc"]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const query = `workspaceId=${alice.workspaceId}&limit=7&order=${order}${cursor ? `&cursor=${cursor}` : ""}`;
        const body = (await get(`/api/v1/logs?${query}`)).json as { data: Json[]; nextCursor?: string };
        seen.push(...body.data.map((e) => e.id as string));
        cursor = body.nextCursor;
        pages++;
      } while (cursor);
      expect(new Set(seen).size, order).toBe(150);
      expect(seen, order).toHaveLength(150);
      expect(pages, order).toBe(Math.ceil(150 / 7));
    }
  });
});

describe("presence: a part not asked for is absent, one asked for and empty is present (D30)", () => {
  let carol: TestAccount;
  let bare: string;
  beforeAll(async () => {
    // An execution that used no model and ran no block: every part it could carry is empty.
    carol = await createAccount(flowlog.store, "team");
    bare = await createWorkflow(flowlog.store, carol.workspaceId, "Bare");
    await flowlog.store.logs.insertExecution(
      execution(carol, bare, {
        cost: { total: 0, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} },
        traceSpans: [],
        finalOutput: undefined,
      }),
    );
  });
  const listed = async (query: string) => {
    const answer = await get(`/api/v1/logs?workspaceId=${carol.workspaceId}${query}`, carol.key);
    expect(answer.status, answer.text).toBe(200);
    return (answer.json as { data: Json[] }).data[0] as Json;
  };
  const overRpc = async (request: {
    details?: string;
    includeTraceSpans?: boolean;
    includeFinalOutput?: boolean;
  }) => {
    const entries = [];
    for (const [name, client] of rpcClients(LogsService, flowlog.server.url)) {
      const response = await client.listLogs(
        { workspaceId: alice.workspaceId, limit: 1, ...request },
        { headers: { "x-api-key": alice.key } },
      );
      entries.push([name, response.data[0]] as const);
    }
    return entries;
  };

  it("details=full with no model used has cost.models {}; asked-for empty trace spans are []", async () => {
    expect(await listed("&details=full")).toMatchObject({ cost: { total: 0, models: {} } });
    expect(await listed("&includeTraceSpans=true&includeFinalOutput=true")).toMatchObject({
      executionData: { traceSpans: [], finalOutput: null },
    });
  });

  // The JSON as written, on REST and on Connect's JSON form, which share the serializer.
  const writtenJson = async (request: Record<string, unknown>) => {
    const restAnswer = await get(
      `/api/v1/logs?${new URLSearchParams({ workspaceId: carol.workspaceId, ...Object.fromEntries(Object.entries(request).map(([k, v]) => [k, String(v)])) })}`,
      carol.key,
    );
    const connectAnswer = await rest(flowlog.server.url, "/flowlog.logs.v1.LogsService/ListLogs", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": carol.key },
      body: JSON.stringify({ workspaceId: carol.workspaceId, ...request }),
    });
    return [
      ["REST", (restAnswer.json as { data: Json[] }).data[0] as Json],
      ["Connect JSON", (connectAnswer.json as { data: Json[] }).data[0] as Json],
    ] as const;
  };

  it("details=basic has no cost.models, even for an entry that used no model", async () => {
    for (const [protocol, entry] of await writtenJson({})) {
      expect(entry.cost, protocol).toEqual({ total: 0 });
    }
    for (const [protocol, entry] of await writtenJson({ details: "full" })) {
      expect(entry.cost, protocol).toMatchObject({ models: {} });
    }
  });

  it("includeFinalOutput alone gives finalOutput and no traceSpans, even with no spans to show", async () => {
    for (const [protocol, entry] of await writtenJson({ includeFinalOutput: true })) {
      expect(entry.executionData, protocol).toEqual({ finalOutput: null });
    }
  });

  it("includeTraceSpans alone gives traceSpans and no finalOutput, on REST and every RPC protocol", async () => {
    const entry = (await get(`/api/v1/logs?workspaceId=${alice.workspaceId}&limit=1&includeTraceSpans=true`))
      .json as { data: { executionData: Json }[] };
    expect(entry.data[0]?.executionData.traceSpans).toHaveLength(1);
    expect(entry.data[0]?.executionData).not.toHaveProperty("finalOutput");
    for (const [name, rpcEntry] of await overRpc({ includeTraceSpans: true })) {
      expect(rpcEntry?.executionData?.traceSpans, name).toHaveLength(1);
      expect(rpcEntry?.executionData?.finalOutput, name).toBeUndefined();
    }
  });

  it("includeFinalOutput gives finalOutput; basic entries carry no workflow, tokens or executionData", async () => {
    for (const [name, rpcEntry] of await overRpc({ includeFinalOutput: true })) {
      expect(rpcEntry?.executionData?.finalOutput?.kind.case, name).toBe("structValue");
    }
    for (const [name, rpcEntry] of await overRpc({})) {
      expect(rpcEntry?.cost?.total, name).toBe(0.0123);
      expect(rpcEntry?.cost?.tokens, name).toBeUndefined();
      expect(rpcEntry?.workflow, name).toBeUndefined();
      expect(rpcEntry?.executionData, name).toBeUndefined();
    }
    const basic = await listed("");
    expect(basic.cost).toMatchObject({ total: 0 });
    expect(basic.cost).not.toHaveProperty("tokens");
    expect(basic).not.toHaveProperty("workflow");
    expect(basic).not.toHaveProperty("executionData");
  });
});

describe("date filters (D9)", () => {
  it("reads a time without an offset as UTC, whatever the server's time zone", async () => {
    const zone = process.env.TZ;
    process.env.TZ = "America/New_York";
    try {
      const count = async (startDate: string) => {
        const query = `workspaceId=${alice.workspaceId}&limit=1000&startDate=${startDate}`;
        return ((await get(`/api/v1/logs?${query}`)).json as { data: Json[] }).data.length;
      };
      // Alice's executions start at 2026-11-01T00:00Z, three a minute for 50 minutes.
      expect(await count("2026-11-01T00:30")).toBe(await count("2026-11-01T00:30:00.000Z"));
      expect(await count("2026-11-01T00:30")).toBe(60);
    } finally {
      process.env.TZ = zone;
    }
  });
});

describe("GET /api/v1/logs/{id} and /api/v1/logs/executions/{executionId}", () => {
  it("returns the detail form with limits inside data and beside it", async () => {
    const list = (await get(`/api/v1/logs?workspaceId=${alice.workspaceId}&limit=1`)).json as {
      data: Json[];
    };
    const id = list.data[0]?.id as string;
    const body = (await get(`/api/v1/logs/${id}`)).json as { data: Json; limits: Json };
    expect(body.data).toMatchObject({
      id,
      workflow: { id: aliceWorkflow, name: "Nightly report" },
      cost: { tokens: { total: 150 } },
      executionData: { traceSpans: [{ id: "span_1" }], finalOutput: { items: 3 } },
    });
    expect(body.data.limits).toEqual(body.limits);
  });

  it("returns the execution with its workflow state snapshot and no data wrapper", async () => {
    const list = (await get(`/api/v1/logs?workspaceId=${alice.workspaceId}&limit=1`)).json as {
      data: Json[];
    };
    const executionId = list.data[0]?.executionId as string;
    const body = (await get(`/api/v1/logs/executions/${executionId}`)).json as Json;
    expect(Object.keys(body).sort()).toEqual([
      "executionId",
      "executionMetadata",
      "limits",
      "workflowId",
      "workflowState",
    ]);
    expect(body.workflowState).toMatchObject({
      blocks: { start: { type: "starter", name: "Start", enabled: true }, api: { type: "api" } },
      edges: [{ source: "start", target: "api" }],
      loops: {},
      parallels: {},
    });
    expect(body.executionMetadata).toMatchObject({
      trigger: "api",
      totalDurationMs: 1234,
      cost: { total: 0.0123, tokens: { total: 150 } },
    });
    expect((body.executionMetadata as Json).startedAt).toMatch(isoMs);
  });
});

describe("authentication and isolation (D5, D10)", () => {
  it("answers 401 without a key, with an unknown key and with a revoked key", async () => {
    const path = `/api/v1/logs?workspaceId=${alice.workspaceId}`;
    expect((await get(path, null)).status).toBe(401);
    expect((await get(path, "flk_not-a-real-key")).status).toBe(401);
    const revoked = await createAccount(flowlog.store);
    await flowlog.store.accounts.revokeApiKey(revoked.keyId, Date.now());
    const response = await get(`/api/v1/logs?workspaceId=${revoked.workspaceId}`, revoked.key);
    expect(response.status).toBe(401);
    expect(response.json).toMatchObject({ code: "unauthenticated", title: "Unauthorized" });
  });

  it("accepts the key as gRPC metadata on every protocol", async () => {
    for (const [name, client] of rpcClients(LogsService, flowlog.server.url)) {
      const response = await client.listLogs(
        { workspaceId: alice.workspaceId, limit: 2 },
        { headers: { "x-api-key": alice.key } },
      );
      expect(response.data, name).toHaveLength(2);
    }
  });

  it("answers 403 for a workspace the user is not a member of, existing or not", async () => {
    expect((await get(`/api/v1/logs?workspaceId=${alice.workspaceId}`, bob.key)).status).toBe(403);
    expect((await get("/api/v1/logs?workspaceId=ws_does_not_exist", bob.key)).status).toBe(403);
  });

  it("answers 404, not 403, for another user's log and execution", async () => {
    for (const path of [`/api/v1/logs/${bobLogId}`, `/api/v1/logs/executions/${bobExecutionId}`]) {
      const response = await get(path, alice.key);
      expect(response.status, path).toBe(404);
      expect(response.text).not.toContain("Bob");
      expect((await get(path, bob.key)).status, path).toBe(200);
    }
  });

  it("never counts another user's executions in the usage figures", async () => {
    const body = (await get(`/api/v1/logs?workspaceId=${bob.workspaceId}`, bob.key)).json as {
      limits: { usage: Json };
    };
    expect(body.limits.usage.currentPeriodCost).toBeCloseTo(0.0123, 10);
  });
});

describe("invalid input gets a 4xx naming the field, never a 500 (D8-D10)", () => {
  const invalid: [string, string][] = [
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    ["limit=ten", "limit"],
    ["limit=1.5", "limit"],
    ["order=up", "order"],
    ["details=everything", "details"],
    ["level=warn", "level"],
    ["triggers=api,cron", "triggers[1]"],
    ["startDate=yesterday", "startDate"],
    ["endDate=2026-13-45T00:00:00Z", "endDate"],
    ["minDurationMs=-1", "minDurationMs"],
    ["maxDurationMs=1.5", "maxDurationMs"],
    ["minCost=cheap", "minCost"],
    ["maxCost=-0.5", "maxCost"],
    ["includeTraceSpans=yes", "includeTraceSpans"],
    ["includeFinalOutput=2", "includeFinalOutput"],
    ["cursor=not-a-cursor", "cursor"],
    [`cursor=${Buffer.from('{"s":"x"}').toString("base64url")}`, "cursor"],
  ];

  it.each(invalid)("%s is refused naming %s", async (query, field) => {
    const response = await get(`/api/v1/logs?workspaceId=${alice.workspaceId}&${query}`);
    expect(response.status).toBe(400);
    expect(response.headers["content-type"]).toBe("application/problem+json");
    expect(response.json).toMatchObject({ status: 400, code: "invalid_argument", errors: [{ field }] });
  });

  it("refuses a cursor used with the other order", async () => {
    const first = (await get(`/api/v1/logs?workspaceId=${alice.workspaceId}&limit=2`)).json as {
      nextCursor: string;
    };
    const response = await get(
      `/api/v1/logs?workspaceId=${alice.workspaceId}&order=asc&cursor=${first.nextCursor}`,
    );
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({
      errors: [{ field: "cursor", message: expect.stringContaining("order=desc") }],
    });
  });

  it("refuses a missing workspaceId with 400 and unknown ids with 404", async () => {
    expect((await get("/api/v1/logs")).json).toMatchObject({
      status: 400,
      errors: [{ field: "workspaceId" }],
    });
    expect((await get("/api/v1/logs/log_unknown")).status).toBe(404);
    expect((await get("/api/v1/logs/executions/ex_unknown")).status).toBe(404);
  });

  it("gives Connect and gRPC clients the matching codes and field violations", async () => {
    for (const [name, client] of rpcClients(LogsService, flowlog.server.url)) {
      const headers = { "x-api-key": alice.key };
      const cases = [
        { request: { workspaceId: alice.workspaceId, limit: 0 }, field: "limit" },
        { request: { workspaceId: alice.workspaceId, order: "up" }, field: "order" },
        { request: { workspaceId: alice.workspaceId, cursor: "bad" }, field: "cursor" },
      ];
      for (const { request, field } of cases) {
        const error = await client.listLogs(request, { headers }).then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
        expect(error?.code, name).toBe(Code.InvalidArgument);
        expect(error?.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.field, name).toBe(field);
      }
      const missing = await client
        .getLog({ id: "log_unknown" }, { headers })
        .catch((e: unknown) => ConnectError.from(e));
      expect((missing as ConnectError).code, name).toBe(Code.NotFound);
    }
  });
});

describe("GET /api/v1/log-stats: the charts' aggregates (issue 17)", () => {
  // Alice's 150 executions start in 2026-11-01's first hour, one in ten an error, each 1234 ms and
  // 0.0123 USD of gpt-4o for 150 tokens; Bob's one is in his own workspace at 10:00.
  const range = "startDate=2026-11-01T00:00:00Z&endDate=2026-11-01T03:00:00Z";
  const stats = (query: string, key: string | null = alice.key) =>
    get(`/api/v1/log-stats?workspaceId=${alice.workspaceId}&${query}`, key);

  it("answers every hour of the range, empty ones as zeros without percentiles, and cost per day by model", async () => {
    const response = await stats(range);
    expect(response.status, response.text).toBe(200);
    const body = response.json as Json;
    expect(body).toMatchObject({
      hours: [
        {
          hour: "2026-11-01T00:00:00.000Z",
          executions: 150,
          errors: 15,
          p50DurationMs: 1234,
          p95DurationMs: 1234,
        },
        { hour: "2026-11-01T01:00:00.000Z", executions: 0, errors: 0 },
        { hour: "2026-11-01T02:00:00.000Z", executions: 0, errors: 0 },
      ],
      // D30: 150 x 0.0123 is exactly 1.845.
      modelCosts: [{ day: "2026-11-01", model: "gpt-4o", cost: 1.845, tokens: 22_500 }],
      start: "2026-11-01T00:00:00.000Z",
      end: "2026-11-01T03:00:00.000Z",
    });
    const hours = body.hours as Json[];
    expect(hours).toHaveLength(3);
    // An hour without executions has no percentiles: absent, not null or 0.
    expect(Object.keys(hours[1] as Json).sort()).toEqual(["errors", "executions", "hour"]);
    expect(body.modelCosts).toHaveLength(1);
  });

  it("carries the limits object and the rate-limit headers, like every other answer (D11, D12)", async () => {
    const response = await stats(range);
    const limits = (response.json as { limits: Json }).limits;
    expect(limits.workflowExecutionRateLimit).toMatchObject({
      sync: { requestsPerMinute: 120, maxBurst: 240 },
      async: { requestsPerMinute: 600, maxBurst: 1200 },
    });
    expect(limits.usage).toMatchObject({ plan: "enterprise", limit: 5000, isExceeded: false });
    expect(response.headers["x-ratelimit-limit"]).toBe("120");
    expect(response.headers["x-ratelimit-remaining"]).toMatch(/^\d+$/);
    expect(response.headers["x-ratelimit-reset"]).toMatch(isoMs);
  });

  it("without dates covers the last 24 hours, the current hour last", async () => {
    const body = (await stats("")).json as { hours: Json[]; start: string; end: string };
    // The test server's clock stands a little after 2026-11-15T12:00:00Z (steppingClock).
    expect(body.start).toBe("2026-11-14T13:00:00.000Z");
    expect(body.end).toBe("2026-11-15T13:00:00.000Z");
    expect(body.hours).toHaveLength(24);
    expect(body.hours[23]?.hour).toBe("2026-11-15T12:00:00.000Z");
  });

  it("applies the list's filters: level=error counts the errors, another workflow nothing (D9)", async () => {
    const errors = (await stats(`${range}&level=error`)).json as Json;
    expect(errors).toMatchObject({
      hours: [{ executions: 15, errors: 15 }, { executions: 0 }, { executions: 0 }],
      modelCosts: [{ day: "2026-11-01", model: "gpt-4o", cost: 0.1845, tokens: 2250 }],
    });
    const other = (await stats(`${range}&workflowIds=wf_other,wf_another`)).json as Json;
    expect((other.hours as Json[]).map((h) => h.executions)).toEqual([0, 0, 0]);
    expect(other.modelCosts).toEqual([]);
  });

  it("gives Connect and gRPC clients the same aggregates as REST", async () => {
    const request = {
      workspaceId: alice.workspaceId,
      startDate: "2026-11-01T00:00:00Z",
      endDate: "2026-11-01T03:00:00Z",
    };
    for (const [name, client] of rpcClients(LogsService, flowlog.server.url)) {
      const answer = await client.getLogStats(request, { headers: { "x-api-key": alice.key } });
      expect(
        answer.hours.map((h) => [h.hour, h.executions, h.errors, h.p50DurationMs, h.p95DurationMs]),
        name,
      ).toEqual([
        ["2026-11-01T00:00:00.000Z", 150, 15, 1234, 1234],
        ["2026-11-01T01:00:00.000Z", 0, 0, undefined, undefined],
        ["2026-11-01T02:00:00.000Z", 0, 0, undefined, undefined],
      ]);
      expect(
        answer.modelCosts.map((c) => [c.day, c.model, c.cost, c.tokens]),
        name,
      ).toEqual([["2026-11-01", "gpt-4o", 1.845, 22_500]]);
      expect([answer.start, answer.end], name).toEqual([
        "2026-11-01T00:00:00.000Z",
        "2026-11-01T03:00:00.000Z",
      ]);
      expect(answer.limits?.usage?.plan, name).toBe("enterprise");
    }
  });

  it("refuses a range longer than 31 days naming endDate and the limit; 31 days are answered", async () => {
    const refused = await stats("startDate=2026-10-01&endDate=2026-11-01T00:00:01Z");
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      code: "invalid_argument",
      errors: [{ field: "endDate", message: expect.stringContaining("at most 31 days") }],
    });
    const onlyStart = await stats("startDate=2026-10-01");
    expect(onlyStart.json).toMatchObject({ errors: [{ field: "endDate" }] });
    for (const [name, client] of rpcClients(LogsService, flowlog.server.url)) {
      const error = await rpcError(() =>
        client.getLogStats(
          { workspaceId: alice.workspaceId, startDate: "2026-10-01", endDate: "2026-11-02" },
          { headers: { "x-api-key": alice.key } },
        ),
      );
      expect(error.code, name).toBe(Code.InvalidArgument);
      expect(error.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.field, name).toBe("endDate");
    }
    const month = (await stats("startDate=2026-10-01&endDate=2026-11-01")).json as { hours: Json[] };
    expect(month.hours).toHaveLength(31 * 24);
  });

  it.each([
    ["level=warn", "level"],
    ["triggers=api,cron", "triggers[1]"],
    ["startDate=yesterday", "startDate"],
    ["minCost=-1", "minCost"],
    ["startDate=2026-11-02&endDate=2026-11-01", "startDate"],
  ])("%s is refused naming %s", async (query, field) => {
    const response = await stats(query);
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ status: 400, code: "invalid_argument", errors: [{ field }] });
  });

  it("answers 401 without a key, and 403 for a workspace the key's user is not a member of (D10)", async () => {
    expect((await stats(range, null)).status).toBe(401);
    expect((await stats(range, "flk_not-a-real-key")).status).toBe(401);
    const foreign = await stats(range, bob.key);
    expect(foreign.status).toBe(403);
    expect(foreign.json).toMatchObject({ code: "permission_denied" });
    expect((await get(`/api/v1/log-stats?workspaceId=ws_does_not_exist&${range}`, bob.key)).status).toBe(403);
    for (const [name, client] of rpcClients(LogsService, flowlog.server.url)) {
      const error = await rpcError(() =>
        client.getLogStats({ workspaceId: alice.workspaceId }, { headers: { "x-api-key": bob.key } }),
      );
      expect(error.code, name).toBe(Code.PermissionDenied);
    }
  });

  it("counts only the workspace's own executions: Bob's hour is empty for Alice and his for him", async () => {
    const day = "startDate=2026-11-01&endDate=2026-11-02";
    const alices = (await stats(day)).json as { hours: Json[] };
    expect(alices.hours[10]).toMatchObject({ executions: 0 });
    const bobs = (await get(`/api/v1/log-stats?workspaceId=${bob.workspaceId}&${day}`, bob.key)).json as {
      hours: Json[];
    };
    expect(bobs.hours[10]).toMatchObject({ executions: 1, p50DurationMs: 1234 });
    expect(bobs.hours.reduce((n, h) => n + (h.executions as number), 0)).toBe(1);
  });
});
