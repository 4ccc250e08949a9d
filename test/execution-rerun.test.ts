import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WorkflowsService } from "../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { PreconditionFailureSchema } from "../gen/google/rpc/error_details_pb.js";
import type { SpanJson } from "../src/engine/json-shapes.js";
import type { PageRequest } from "../src/store/log-list-sql.js";
import type { LogEntryRecord } from "../src/store/records.js";
import { logIdOf } from "../src/temporal/activities/execution-activities.js";
import { restWithKey, rpcError } from "./support/api-server.js";
import { type RunningWorker, startWorker, testDeps } from "./support/engine.js";
import {
  createAccount,
  createWorkflow,
  execution,
  startFlowlog,
  steppingClock,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { type HttpReceiver, sendJson, startReceiver } from "./support/http-receiver.js";
import { until } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `rerun-${randomUUID()}`;

let flowlog: TestFlowlog;
let worker: RunningWorker;
/** The upstream the workflows' HTTP blocks call; each test gives the answers of its own paths. */
let upstream: HttpReceiver;
const answers = new Map<string, (index: number) => { status: number; body: unknown }>();
let alice: TestAccount;

beforeAll(async () => {
  upstream = await startReceiver((request, response) => {
    const path = request.target.split("?")[0] as string;
    const calls = upstream.received.filter((r) => r.target.split("?")[0] === path).length;
    const answer = answers.get(path)?.(calls) ?? { status: 404, body: { error: "no such path" } };
    sendJson(response, answer.status, answer.body);
  });
  flowlog = await startFlowlog({ clock: steppingClock(), taskQueue });
  worker = await startWorker(temporalServer, testDeps(flowlog.store), taskQueue);
  alice = await createAccount(flowlog.store);
});

afterAll(async () => {
  await worker?.stop();
  await flowlog?.close();
  await upstream?.close();
});

const call = (method: string, path: string, body?: unknown, key: string = alice.key) =>
  restWithKey(flowlog.server.url, key, method, path, body);

/** The calls the upstream received on one path. */
const callsTo = (path: string) => upstream.received.filter((r) => r.target.split("?")[0] === path);

/** The starter, then an HTTP block posting the input's order to `path` on the upstream. */
function callingState(path: string, retry: { retries: number; retryBaseMs: number }) {
  return {
    blocks: {
      start: { type: "starter", name: "Start" },
      fetch: {
        type: "api",
        name: "Fetch",
        config: {
          method: "POST",
          url: `${upstream.origin}${path}`,
          body: { order: "<start.order>" },
          ...retry,
        },
      },
    },
    edges: [{ source: "start", target: "fetch" }],
  };
}

/** A workflow saved through the API, so it has a version to run; its id. */
async function savedWorkflow(state: object, name = "Rerun test"): Promise<string> {
  const saved = await call("POST", `/api/v1/workspaces/${alice.workspaceId}/workflows`, { name, state });
  expect(saved.status, saved.text).toBe(200);
  return (saved.json as { workflow: { id: string } }).workflow.id;
}

const callingWorkflow = (path: string, retry: { retries: number; retryBaseMs: number }) =>
  savedWorkflow(callingState(path, retry), `Calls ${path}`);

async function startAsync(workflowId: string, input: unknown): Promise<string> {
  const started = await call("POST", `/api/v1/workflows/${workflowId}/execute`, { input, async: true });
  expect(started.status, started.text).toBe(202);
  return (started.json as { executionId: string }).executionId;
}

/** The execution's entries by the logs API's query, once it has one, the first read whole. */
async function loggedEntries(executionId: string): Promise<[LogEntryRecord, ...unknown[]]> {
  const page: PageRequest = {
    order: "desc",
    limit: 10,
    withCostDetail: false,
    withTraceSpans: false,
    withFinalOutput: false,
  };
  const entries = await until(`the entry of ${executionId}`, async () => {
    const listed = await flowlog.store.logs.list({ workspaceId: alice.workspaceId, executionId }, page);
    return listed.entries.length > 0 ? listed.entries : undefined;
  });
  const entry = await flowlog.store.logs.getEntry(logIdOf(executionId));
  if (!entry) throw new Error(`entry ${executionId} listed but not read`);
  return [entry, ...entries.slice(1)];
}

describe("CancelExecution (D47): POST /api/v1/executions/{executionId}:cancel", () => {
  it("cancels an execution in its block's retry wait: logged once, error cancelled with the reason, notified", async () => {
    answers.set("/down", () => ({ status: 503, body: { error: "down for maintenance" } }));
    // Each retry waits a minute, longer than the test may take: only the cancellation can end it in time.
    const workflowId = await callingWorkflow("/down", { retries: 3, retryBaseMs: 60_000 });
    const hook = await startReceiver((_, response) => sendJson(response, 200, {}));
    try {
      await subscribeWebhook(flowlog.store, alice.workspaceId, `${hook.origin}/hook`, {
        include: { finalOutput: true, traceSpans: false, rateLimits: false, usage: false },
      });
      const executionId = await startAsync(workflowId, { order: 7 });
      await until("the first call upstream", () => callsTo("/down").length >= 1 || undefined);

      const cancelled = await call("POST", `/api/v1/executions/${executionId}:cancel`, {
        reason: "upstream is down, retrying later",
      });

      expect(cancelled.status, cancelled.text).toBe(202);
      expect(cancelled.json).toEqual({ executionId });
      const [entry, ...more] = await loggedEntries(executionId);
      expect(more).toEqual([]);
      expect(entry).toMatchObject({
        level: "error",
        finalOutput: { error: "cancelled", reason: "upstream is down, retrying later" },
      });
      // What ended before the cancellation stays in the trace: the starter, with the input.
      expect(entry.traceSpans).toEqual([expect.objectContaining({ type: "starter", output: { order: 7 } })]);
      const event = await until("the failure's notification", () => {
        const body = hook.received.at(0)?.body;
        return body === undefined ? undefined : (JSON.parse(body) as { data: Record<string, unknown> });
      });
      expect(event.data).toMatchObject({
        executionId,
        status: "error",
        finalOutput: { error: "cancelled", reason: "upstream is down, retrying later" },
      });
      // Cancelled is final: a second cancel is refused, naming how it ended.
      const again = await call("POST", `/api/v1/executions/${executionId}:cancel`, {});
      expect(again.status, again.text).toBe(400);
      expect(again.json).toMatchObject({
        code: "failed_precondition",
        detail: `execution ${executionId} has ended, logged with level error; only a running execution can be cancelled (D47)`,
      });
    } finally {
      await hook.close();
    }
  }, 60_000);

  it("a completed execution cannot be cancelled: failed_precondition naming its state", async () => {
    answers.set("/up", () => ({ status: 200, body: { ok: true } }));
    const workflowId = await callingWorkflow("/up", { retries: 0, retryBaseMs: 100 });
    const done = await call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: { order: 1 } });
    expect(done.status, done.text).toBe(200);
    const { executionId } = done.json as { executionId: string };

    const refused = await call("POST", `/api/v1/executions/${executionId}:cancel`, {});

    expect(refused.status, refused.text).toBe(400);
    expect(refused.json).toMatchObject({
      code: "failed_precondition",
      detail: expect.stringContaining(`execution ${executionId} has ended, logged with level info`),
    });
  }, 30_000);

  it("an unknown execution, or another workspace's, is not found; a reason past 500 characters is invalid", async () => {
    answers.set("/slow", () => ({ status: 503, body: {} }));
    const workflowId = await callingWorkflow("/slow", { retries: 3, retryBaseMs: 60_000 });
    const executionId = await startAsync(workflowId, { order: 2 });
    const bob = await createAccount(flowlog.store);

    const unknown = await call("POST", "/api/v1/executions/ex_nothing_like_it:cancel", {});
    const others = await call("POST", `/api/v1/executions/${executionId}:cancel`, {}, bob.key);
    const tooLong = await call("POST", `/api/v1/executions/${executionId}:cancel`, {
      reason: "x".repeat(501),
    });

    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.json).toMatchObject({ detail: "execution ex_nothing_like_it not found" });
    expect(others.status, others.text).toBe(404);
    expect(others.json).toMatchObject({ detail: `execution ${executionId} not found` });
    expect(tooLong.status, tooLong.text).toBe(400);
    expect(JSON.stringify(tooLong.json)).toContain("reason");
    // Still running: bob's attempt changed nothing; its owner cancels it.
    expect((await call("POST", `/api/v1/executions/${executionId}:cancel`, {})).status).toBe(202);
    expect(await loggedEntries(executionId)).toHaveLength(1);
  }, 60_000);
});

describe("RetryExecution (D47): POST /api/v1/executions/{executionId}:retry", () => {
  /** An execution of a workflow calling `path`, run to its end (the upstream fails it), then version 2 calling `path`-v2. */
  async function failedThenChanged(path: string) {
    answers.set(path, () => ({ status: 503, body: { error: "down" } }));
    answers.set(`${path}-v2`, () => ({ status: 200, body: { version: 2 } }));
    const workflowId = await callingWorkflow(path, { retries: 0, retryBaseMs: 100 });
    const ran = await call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: { order: 42 } });
    expect(ran.status, ran.text).toBe(500);
    const { executionId } = ran.json as { executionId: string };
    const changed = await call("PUT", `/api/v1/workflows/${workflowId}`, {
      state: callingState(`${path}-v2`, { retries: 0, retryBaseMs: 100 }),
    });
    expect(changed.status, changed.text).toBe(200);
    return { workflowId, executionId };
  }

  it("version original runs the version the execution ran, with its input and trigger, after the workflow changed", async () => {
    const { executionId } = await failedThenChanged("/orders");
    answers.set("/orders", () => ({ status: 200, body: { recovered: true } }));

    const retried = await call("POST", `/api/v1/executions/${executionId}:retry`, {
      from: "start",
      version: "original",
    });

    expect(retried.status, retried.text).toBe(202);
    const retry = retried.json as { executionId: string; retryOf: string; version: number };
    expect(retry).toEqual({ executionId: expect.stringMatching(/^ex_/), retryOf: executionId, version: 1 });
    expect(retry.executionId).not.toBe(executionId);
    const [entry] = await loggedEntries(retry.executionId);
    expect(entry).toMatchObject({ level: "info", trigger: "api", billedUserId: alice.userId });
    expect(callsTo("/orders").map((r) => JSON.parse(r.body))).toEqual([{ order: 42 }, { order: 42 }]);
    expect(callsTo("/orders-v2")).toEqual([]);

    const detail = await call("GET", `/api/v1/logs/executions/${retry.executionId}`);
    expect(detail.json).toMatchObject({
      executionMetadata: { retryOf: executionId, workflowVersion: 1, trigger: "api" },
    });
    const old = await call("GET", `/api/v1/logs/${logIdOf(executionId)}`);
    expect(old.json).toMatchObject({ data: { executionId, retriedBy: retry.executionId } });
    expect((old.json as { data: Record<string, unknown> }).data).not.toHaveProperty("retryOf");
  }, 60_000);

  it("version current runs the workflow's version now", async () => {
    const { executionId } = await failedThenChanged("/invoices");

    const retried = await call("POST", `/api/v1/executions/${executionId}:retry`, { version: "current" });

    expect(retried.status, retried.text).toBe(202);
    const retry = retried.json as { executionId: string; version: number };
    expect(retry.version).toBe(2);
    const [entry] = await loggedEntries(retry.executionId);
    expect(entry).toMatchObject({ level: "info", finalOutput: { data: { version: 2 } } });
    expect(callsTo("/invoices-v2").map((r) => JSON.parse(r.body))).toEqual([{ order: 42 }]);
    expect(callsTo("/invoices")).toHaveLength(1);
    const detail = await call("GET", `/api/v1/logs/executions/${retry.executionId}`);
    expect(detail.json).toMatchObject({ executionMetadata: { retryOf: executionId, workflowVersion: 2 } });
  }, 60_000);

  it("a cancelled execution can be retried: its starter span kept the input", async () => {
    answers.set("/stuck", (index) =>
      index <= 1 ? { status: 503, body: {} } : { status: 200, body: { unstuck: true } },
    );
    const workflowId = await callingWorkflow("/stuck", { retries: 3, retryBaseMs: 60_000 });
    const executionId = await startAsync(workflowId, { order: 9 });
    await until("the first call upstream", () => callsTo("/stuck").length >= 1 || undefined);
    expect((await call("POST", `/api/v1/executions/${executionId}:cancel`, {})).status).toBe(202);
    await loggedEntries(executionId);
    // Usually one, but a busy machine may run the block's first try (a local activity) again when its
    // workflow task timed out before recording it: Temporal's local activities are at least once.
    const callsBefore = callsTo("/stuck").length;

    const retried = await call("POST", `/api/v1/executions/${executionId}:retry`, {});

    expect(retried.status, retried.text).toBe(202);
    const [entry] = await loggedEntries((retried.json as { executionId: string }).executionId);
    expect(entry).toMatchObject({ level: "info" });
    // The retry called upstream with the input the cancelled execution had started with.
    const retryCalls = callsTo("/stuck").slice(callsBefore);
    expect(retryCalls.length).toBeGreaterThan(0);
    expect(retryCalls.map((r) => JSON.parse(r.body))).toEqual(retryCalls.map(() => ({ order: 9 })));
  }, 60_000);

  it("is admitted like any execution (D12): a caller past the month's usage limit is refused, and nothing starts", async () => {
    const carol = await createAccount(flowlog.store, "free");
    const workflowId = await createWorkflow(flowlog.store, carol.workspaceId);
    // This month by the API's clock (steppingClock), and more than the free plan's 10 USD.
    const startedAt = Date.parse("2026-11-15T08:00:00.000Z");
    const starter = {
      id: "start",
      name: "Start",
      type: "starter",
      status: "success",
      startTime: new Date(startedAt).toISOString(),
      endTime: new Date(startedAt).toISOString(),
      durationMs: 0,
      input: { order: 1 },
      output: { order: 1 },
      children: [],
    };
    const costly = execution(carol, workflowId, {
      level: "error",
      startedAt,
      cost: { total: 11, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} },
      traceSpans: [starter],
    });
    await flowlog.store.logs.insertExecution(costly);
    const { executionId } = costly.entry;

    const refused = await call(
      "POST",
      `/api/v1/executions/${executionId}:retry`,
      { version: "current" },
      carol.key,
    );

    expect(refused.status, refused.text).toBe(429);
    expect(refused.json).toMatchObject({
      detail: expect.stringContaining("the usage limit of the free plan"),
    });
    expect(await flowlog.store.logs.retryLinks(executionId)).toEqual({});
    // Logged before the version was kept: only version current can run it.
    const original = await call("POST", `/api/v1/executions/${executionId}:retry`, {}, carol.key);
    expect(original.status, original.text).toBe(400);
    expect(original.json).toMatchObject({
      detail: expect.stringContaining("it was logged before flowlog kept the version an execution ran"),
    });
  }, 30_000);

  it("refuses what it cannot retry: another workspace's execution, a bad from or version", async () => {
    const { executionId } = await failedThenChanged("/refusals");
    const bob = await createAccount(flowlog.store);

    const others = await call("POST", `/api/v1/executions/${executionId}:retry`, {}, bob.key);
    const badFrom = await call("POST", `/api/v1/executions/${executionId}:retry`, { from: "middle" });
    const badVersion = await call("POST", `/api/v1/executions/${executionId}:retry`, { version: "v1" });

    expect(others.status, others.text).toBe(404);
    expect(others.json).toMatchObject({ detail: `execution ${executionId} not found` });
    expect(badFrom.status, badFrom.text).toBe(400);
    expect(JSON.stringify(badFrom.json)).toContain("from");
    expect(badVersion.status, badVersion.text).toBe(400);
    expect(JSON.stringify(badVersion.json)).toContain("version");
  }, 60_000);
});

describe("RetryExecution from the failed block (D47): reuses what succeeded before it", () => {
  /** An HTTP block posting `body` to `path` on the upstream, failing at once on an error answer. */
  const apiBlock = (name: string, path: string, body: unknown = {}) => ({
    type: "api",
    name,
    config: { method: "POST", url: `${upstream.origin}${path}`, body, retries: 0 },
  });
  const edge = (source: string, target: string) => ({ source, target });

  /** Runs the workflow to its failure, then resumes it from the failed block; the resumed entry. */
  async function failedThenResumed(state: object, input: unknown, version = "original") {
    const workflowId = await savedWorkflow(state);
    const ran = await call("POST", `/api/v1/workflows/${workflowId}/execute`, { input });
    expect(ran.status, ran.text).toBe(500);
    const { executionId } = ran.json as { executionId: string };
    const [failed] = await loggedEntries(executionId);
    const resumed = await call("POST", `/api/v1/executions/${executionId}:retry`, {
      from: "failed_block",
      version,
    });
    expect(resumed.status, resumed.text).toBe(202);
    const [entry] = await loggedEntries((resumed.json as { executionId: string }).executionId);
    return { workflowId, executionId, failed, entry };
  }

  /** The spans of an entry by id, children included. */
  const spansById = (entry: LogEntryRecord) => {
    const all = new Map<string, SpanJson>();
    const visit = (spans: SpanJson[]) => {
      for (const span of spans) {
        all.set(span.id, span);
        visit(span.children);
      }
    };
    visit(entry.traceSpans as SpanJson[]);
    return all;
  };

  it("runs the third block onwards only: the first two are not called again, their old outputs are in the new trace", async () => {
    let served = 0;
    answers.set("/one", () => ({ status: 200, body: { step: 1, served: ++served } }));
    answers.set("/two", () => ({ status: 200, body: { step: 2, served: ++served } }));
    answers.set("/three", (index) =>
      index === 1 ? { status: 503, body: { error: "down" } } : { status: 200, body: { step: 3 } },
    );
    const state = {
      blocks: {
        start: { type: "starter", name: "Start" },
        one: apiBlock("One", "/one"),
        two: apiBlock("Two", "/two", { after: "<one.data>" }),
        three: apiBlock("Three", "/three", { after: "<two.data>" }),
      },
      edges: [edge("start", "one"), edge("one", "two"), edge("two", "three")],
    };

    const { failed, entry } = await failedThenResumed(state, { order: 5 });

    expect(entry).toMatchObject({ level: "info" });
    expect(callsTo("/one")).toHaveLength(1);
    expect(callsTo("/two")).toHaveLength(1);
    expect(callsTo("/three").map((r) => JSON.parse(r.body))).toEqual([
      { after: { step: 2, served: 2 } },
      { after: { step: 2, served: 2 } },
    ]);
    const before = spansById(failed);
    const after = spansById(entry);
    for (const id of ["one", "two"]) {
      expect(after.get(id)?.output).toEqual(before.get(id)?.output);
      expect(after.get(id)?.status).toBe("success");
    }
    expect(after.get("three")).toMatchObject({ status: "success", output: { data: { step: 3 } } });
  }, 60_000);

  it("inside a loop: the iterations before the failure and the failed one's first block are reused", async () => {
    answers.set("/loop-fetch", () => ({ status: 200, body: { fetched: true } }));
    answers.set("/loop-store", (index) =>
      index === 2 ? { status: 503, body: {} } : { status: 200, body: {} },
    );
    const state = {
      blocks: {
        start: { type: "starter", name: "Start" },
        fetch: apiBlock("Fetch", "/loop-fetch", { n: "<loop.index>" }),
        store: apiBlock("Store", "/loop-store", { n: "<loop.index>" }),
      },
      loops: { pages: { type: "for", nodes: ["fetch", "store"], iterations: 3 } },
      edges: [edge("start", "pages"), edge("fetch", "store")],
    };

    const { entry } = await failedThenResumed(state, {});

    expect(entry).toMatchObject({ level: "info" });
    const bodies = (path: string) => callsTo(path).map((r) => (JSON.parse(r.body) as { n: number }).n);
    // First run: fetch 0, store 0, fetch 1, store 1 (503). Resumed: store 1, then iteration 2.
    expect(bodies("/loop-fetch")).toEqual([0, 1, 2]);
    expect(bodies("/loop-store")).toEqual([0, 1, 1, 2]);
    expect([...spansById(entry).keys()]).toEqual(
      expect.arrayContaining(["fetch-i0", "store-i0", "fetch-i1", "store-i1", "fetch-i2", "store-i2"]),
    );
  }, 60_000);

  it("inside a parallel: each branch reuses what succeeded in it", async () => {
    answers.set("/branch-fetch", () => ({ status: 200, body: { fetched: true } }));
    let failedOnce = false;
    answers.set("/branch-store", (index) => {
      const branch = (JSON.parse(callsTo("/branch-store")[index - 1]?.body ?? "{}") as { b: number }).b;
      if (branch === 1 && !failedOnce) {
        failedOnce = true;
        return { status: 503, body: {} };
      }
      return { status: 200, body: { stored: branch } };
    });
    const state = {
      blocks: {
        start: { type: "starter", name: "Start" },
        fetch: apiBlock("Fetch", "/branch-fetch", { b: "<parallel.index>" }),
        store: apiBlock("Store", "/branch-store", { b: "<parallel.index>" }),
      },
      parallels: { copies: { type: "count", nodes: ["fetch", "store"], count: 2 } },
      edges: [edge("start", "copies"), edge("fetch", "store")],
    };

    const { entry } = await failedThenResumed(state, {});

    expect(entry).toMatchObject({ level: "info" });
    const bodies = (path: string) =>
      callsTo(path)
        .map((r) => (JSON.parse(r.body) as { b: number }).b)
        .sort();
    expect(bodies("/branch-fetch")).toEqual([0, 1]);
    // Branch 0 stored the first time and is reused; branch 1 failed to store and stores again.
    expect(bodies("/branch-store")).toEqual([0, 1, 1]);
    expect(spansById(entry).get("store-b1")).toMatchObject({
      status: "success",
      output: { data: { stored: 1 } },
    });
  }, 60_000);

  it("version current is refused when a block it would reuse changed; a changed later block is fine", async () => {
    answers.set("/first", () => ({ status: 200, body: {} }));
    answers.set("/second", () => ({ status: 503, body: {} }));
    const state = (firstPath: string, secondPath: string) => ({
      blocks: {
        start: { type: "starter", name: "Start" },
        first: apiBlock("First", firstPath),
        second: apiBlock("Second", secondPath),
      },
      edges: [edge("start", "first"), edge("first", "second")],
    });
    const workflowId = await savedWorkflow(state("/first", "/second"));
    const ran = await call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: {} });
    const { executionId } = ran.json as { executionId: string };
    const resume = () =>
      call("POST", `/api/v1/executions/${executionId}:retry`, { from: "failed_block", version: "current" });
    expect(
      (await call("PUT", `/api/v1/workflows/${workflowId}`, { state: state("/first-v2", "/second") })).status,
    ).toBe(200);

    const refused = await resume();

    expect(refused.status, refused.text).toBe(400);
    expect(refused.json).toMatchObject({
      code: "failed_precondition",
      detail: expect.stringContaining("blocks whose outputs it would reuse changed in version 2 (first)"),
    });
    answers.set("/second-v3", () => ({ status: 200, body: { fixed: true } }));
    expect(
      (await call("PUT", `/api/v1/workflows/${workflowId}`, { state: state("/first", "/second-v3") })).status,
    ).toBe(200);
    const resumed = await resume();
    expect(resumed.status, resumed.text).toBe(202);
    expect(resumed.json).toMatchObject({ version: 3 });
    const [entry] = await loggedEntries((resumed.json as { executionId: string }).executionId);
    expect(entry).toMatchObject({ level: "info", finalOutput: { data: { fixed: true } } });
    expect(callsTo("/first")).toHaveLength(1);
  }, 60_000);

  it("an execution that did not fail has no failed block to resume from", async () => {
    answers.set("/fine", () => ({ status: 200, body: {} }));
    const workflowId = await callingWorkflow("/fine", { retries: 0, retryBaseMs: 100 });
    const ran = await call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: { order: 3 } });
    const { executionId } = ran.json as { executionId: string };

    const refused = await call("POST", `/api/v1/executions/${executionId}:retry`, { from: "failed_block" });

    expect(refused.status, refused.text).toBe(400);
    expect(refused.json).toMatchObject({
      detail: `execution ${executionId} cannot be retried: it did not fail; retry it from the start (D47)`,
    });
  }, 30_000);
});

describe("CancelExecution and RetryExecution over gRPC", () => {
  it("answer with the codes and details REST maps: not_found, failed_precondition with its PreconditionFailure", async () => {
    answers.set("/grpc", () => ({ status: 200, body: {} }));
    const workflowId = await callingWorkflow("/grpc", { retries: 0, retryBaseMs: 100 });
    const ran = await call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: { order: 4 } });
    const { executionId } = ran.json as { executionId: string };
    const transport = createGrpcTransport({
      baseUrl: flowlog.server.url,
      interceptors: [
        (next) => (request) => {
          request.header.set("x-api-key", alice.key);
          return next(request);
        },
      ],
    });
    const workflows = createClient(WorkflowsService, transport);

    const missing = await rpcError(() => workflows.cancelExecution({ executionId: "ex_missing" }));
    const ended = await rpcError(() => workflows.cancelExecution({ executionId }));
    const notFailed = await rpcError(() => workflows.retryExecution({ executionId, from: "failed_block" }));
    const retried = await workflows.retryExecution({ executionId });

    expect(missing.code).toBe(Code.NotFound);
    expect(ended.code).toBe(Code.FailedPrecondition);
    expect(ended.findDetails(PreconditionFailureSchema)[0]?.violations[0]).toMatchObject({
      type: "EXECUTION_ENDED",
      subject: `execution ${executionId}`,
    });
    expect(notFailed.code).toBe(Code.FailedPrecondition);
    expect(notFailed.findDetails(PreconditionFailureSchema)[0]?.violations[0]?.type).toBe("RETRY");
    expect(retried).toMatchObject({ retryOf: executionId, version: 1 });
    expect((await loggedEntries(retried.executionId))[0]).toMatchObject({ level: "info" });
  }, 30_000);
});
