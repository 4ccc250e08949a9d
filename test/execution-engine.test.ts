import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { executionCost } from "../src/domain/model-prices.js";
import type { BlockJson, EdgeJson, SpanJson } from "../src/engine/json-shapes.js";
import { agentBaseUrlVariable, agentKeyVariable } from "../src/temporal/activities/block-activities.js";
import { executionIdOf } from "../src/temporal/execution-ids.js";
import { flowlogSearchAttributes } from "../src/temporal/search-attributes.js";
import { EngineHarness, type RunningWorker, startWorker, testDeps } from "./support/engine.js";
import { isoMs } from "./support/formats.js";
import { receiversClosedAfterAll, sendJson } from "./support/http-receiver.js";

const temporal = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const block = (type: string, name: string, config: JsonObject = {}, enabled = true): BlockJson => ({
  type,
  name,
  config,
  enabled,
});
const edge = (source: string, target: string, sourceHandle?: string): EdgeJson =>
  sourceHandle === undefined ? { source, target } : { source, target, sourceHandle };
const starter = block("starter", "Start");
const respond = (data: JsonObject["data"], extra: JsonObject = {}) =>
  block("response", "Respond", { data, ...extra });

let harness: EngineHarness;
let worker: RunningWorker;
const receiver = receiversClosedAfterAll();

beforeAll(async () => {
  harness = await EngineHarness.connect(temporal);
  worker = await startWorker(temporal, testDeps(harness.store));
});

afterAll(async () => {
  await worker?.stop();
  await harness?.close();
});

const run = (workflowId: string, input: JsonObject = {}) => harness.run(worker.taskQueue, workflowId, input);

function spanNamed(spans: SpanJson[], name: string): SpanJson {
  const span = spans.find((s) => s.name === name);
  if (!span) throw new Error(`no span named ${name} among ${spans.map((s) => s.name).join(", ")}`);
  return span;
}

describe("Execution engine: blocks and references (D13, D14)", () => {
  it("runs starter, api and response, passing outputs between blocks by reference", async () => {
    const api = await receiver((request, response) =>
      sendJson(response, 200, { customer: request.target, tier: "gold" }, { "x-served-by": "test" }),
    );
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        lookup: block("api", "Look Up", {
          method: "POST",
          url: `${api.origin}/customers/{id}`,
          pathParams: { id: "<start.customerId>" },
          query: { verbose: "<start.verbose>" },
          body: { asked: "<start.customerId>" },
        }),
        done: respond(
          { tier: "<lookup.data.tier>", status: "<lookup.status>", server: "<lookup.headers.x-served-by>" },
          { status: 201 },
        ),
      },
      edges: [edge("start", "lookup"), edge("lookup", "done")],
    });

    const { result, logged } = await run(workflowId, { customerId: "c 42", verbose: true });

    expect(api.received[0]).toMatchObject({ method: "POST", target: "/customers/c%2042?verbose=true" });
    expect(JSON.parse(api.received[0]?.body ?? "")).toEqual({ asked: "c 42" });
    expect(result).toMatchObject({ status: "success", httpStatus: 201 });
    expect(result.output).toEqual({
      data: { tier: "gold", status: 200, server: "test" },
      status: 201,
      headers: {},
    });
    expect(logged.entry).toMatchObject({ level: "info", trigger: "manual", folderId: harness.folderId });
    expect(logged.entry.finalOutput).toEqual(result.output);
    expect(logged.entry.traceSpans.map((s) => (s as SpanJson).type)).toEqual(["starter", "api", "response"]);
    const lookup = spanNamed(logged.entry.traceSpans as SpanJson[], "Look Up");
    expect(lookup).toMatchObject({ status: "success", output: { status: 200, data: { tier: "gold" } } });
    expect(lookup.input).toMatchObject({ pathParams: { id: "c 42" }, body: { asked: "c 42" } });
    for (const span of logged.entry.traceSpans as SpanJson[]) {
      expect(span.startTime).toMatch(isoMs);
      expect(Date.parse(span.endTime) - Date.parse(span.startTime)).toBe(span.durationMs);
    }
    expect(logged.entry.totalDurationMs).toBe(logged.entry.endedAt - logged.entry.startedAt);
  });

  it("a condition takes the branch whose expression holds, and only that branch runs", async () => {
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        check: block("condition", "Check", {
          conditions: [{ id: "big", expression: "<start.amount> > 100" }, { id: "else" }],
        }),
        big: respond("big"),
        small: respond("small"),
      },
      edges: [edge("start", "check"), edge("check", "big", "big"), edge("check", "small", "else")],
    });

    const [big, small] = await Promise.all([
      run(workflowId, { amount: 150 }),
      run(workflowId, { amount: "7" }),
    ]);

    expect(big?.result.output).toMatchObject({ data: "big" });
    expect(small?.result.output).toMatchObject({ data: "small" });
    expect(spanNamed(big?.logged.entry.traceSpans as SpanJson[], "Check").output).toEqual({
      selectedPath: "big",
    });
    expect(small?.logged.entry.traceSpans).toHaveLength(3);
  });

  it("the agent block calls the workspace's chat-completions provider and its tokens and cost reach the log", async () => {
    const provider = await receiver((request, response) => {
      const authorized = request.headers.authorization === "Bearer agent-key-123";
      const { messages } = JSON.parse(request.body) as { messages: { content: string }[] };
      sendJson(response, authorized ? 200 : 401, {
        model: "gpt-4o-mini-2024-07-18",
        choices: [{ message: { role: "assistant", content: `echo: ${messages.at(-1)?.content}` } }],
        usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 },
      });
    });
    await harness.store.environment.set(
      harness.account.workspaceId,
      agentBaseUrlVariable,
      provider.origin,
      Date.now(),
    );
    await harness.store.environment.set(
      harness.account.workspaceId,
      agentKeyVariable,
      "agent-key-123",
      Date.now(),
    );
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        answer: block("agent", "Answer", { model: "gpt-4o-mini", prompt: "Summarise <start.topic>" }),
      },
      edges: [edge("start", "answer")],
    });

    const { result, logged } = await run(workflowId, { topic: "logs" });

    expect(result.output).toMatchObject({ content: "echo: Summarise logs", model: "gpt-4o-mini-2024-07-18" });
    const span = spanNamed(logged.entry.traceSpans as SpanJson[], "Answer");
    const expected = executionCost([
      { model: "gpt-4o-mini-2024-07-18", promptTokens: 1200, completionTokens: 300 },
    ]);
    expect(span).toMatchObject({
      type: "agent",
      model: "gpt-4o-mini-2024-07-18",
      tokens: { prompt: 1200, completion: 300, total: 1500 },
      cost: expected.total,
    });
    expect(logged.entry.cost).toEqual(expected);
    expect(logged.entry.cost.total).toBeGreaterThan(0);
  });

  it("an agent answer too big for Temporal to carry fails the block naming the quota; the execution is logged once", async () => {
    const provider = await receiver((_, response) =>
      sendJson(response, 200, {
        model: "gpt-4o-mini",
        choices: [{ message: { role: "assistant", content: "z".repeat(2 * 1024 * 1024) } }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      }),
    );
    const { workspaceId } = harness.account;
    await harness.store.environment.set(workspaceId, agentBaseUrlVariable, provider.origin, Date.now());
    await harness.store.environment.set(workspaceId, agentKeyVariable, "agent-key-123", Date.now());
    const workflowId = await harness.saveWorkflow({
      blocks: { start: starter, answer: block("agent", "Answer", { model: "gpt-4o-mini", prompt: "Go" }) },
      edges: [edge("start", "answer")],
    });

    const { result, logged } = await run(workflowId);

    expect(result.status).toBe("error");
    expect(spanNamed(logged.entry.traceSpans as SpanJson[], "Answer").error).toMatch(
      /^block output is \d+ bytes as JSON, more than the 1048576 an execution carries/,
    );
    expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
    expect(provider.received).toHaveLength(1);
  });

  it("an agent block referencing more than its block activity's request may carry reads it back from the store", async () => {
    // 600 Ki characters of input: past carriedOutputChars, the referenced outputs are parked, not sent
    // in the block activity's request (payloads over 2 MiB made Temporal terminate the execution).
    const provider = await receiver((request, response) => {
      const { messages } = JSON.parse(request.body) as { messages: { content: string }[] };
      sendJson(response, 200, {
        model: "gpt-4o-mini",
        choices: [{ message: { role: "assistant", content: `read ${messages.at(-1)?.content.length}` } }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      });
    });
    const { workspaceId } = harness.account;
    await harness.store.environment.set(workspaceId, agentBaseUrlVariable, provider.origin, Date.now());
    await harness.store.environment.set(workspaceId, agentKeyVariable, "agent-key-123", Date.now());
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        answer: block("agent", "Answer", { model: "gpt-4o-mini", prompt: "<start.text>" }),
      },
      edges: [edge("start", "answer")],
    });
    const text = "w".repeat(600 * 1024);

    const { result } = await run(workflowId, { text });

    expect(result.status).toBe("success");
    expect(result.output).toMatchObject({ content: `read ${text.length}` });
    expect(provider.received).toHaveLength(1);
  });

  it("a disabled block is skipped: no request, no span, and the walk goes on past it", async () => {
    const api = await receiver((_, response) => sendJson(response, 200, {}));
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        call: block("api", "Call", { method: "GET", url: api.origin }, false),
        done: respond("reached"),
      },
      edges: [edge("start", "call"), edge("call", "done")],
    });

    const { result, logged } = await run(workflowId);

    expect(api.received).toHaveLength(0);
    expect(result.output).toMatchObject({ data: "reached" });
    expect((logged.entry.traceSpans as SpanJson[]).map((s) => s.name)).toEqual(["Start", "Respond"]);
  });
});

describe("Execution engine: loops and parallels with nested spans (D13, D17)", () => {
  it("a for loop runs its members once per iteration with <loop.index>", async () => {
    const api = await receiver((request, response) => sendJson(response, 200, { seen: request.target }));
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        page: block("api", "Page", {
          method: "GET",
          url: `${api.origin}/page`,
          query: { n: "<loop.index>" },
        }),
        done: respond({ last: "<page.data.seen>", all: "<pages.results>" }),
      },
      loops: { pages: { type: "for", nodes: ["page"], iterations: 3 } },
      edges: [edge("start", "pages"), edge("pages", "done")],
    });

    const { result, logged } = await run(workflowId);

    expect(api.received.map((r) => r.target)).toEqual(["/page?n=0", "/page?n=1", "/page?n=2"]);
    expect(result.output).toMatchObject({ data: { last: "/page?n=2" } });
    const loop = spanNamed(logged.entry.traceSpans as SpanJson[], "pages");
    expect(loop).toMatchObject({ type: "loop", status: "success", input: { type: "for", iterations: 3 } });
    expect(loop.children.map((c) => c.id)).toEqual(["page-i0", "page-i1", "page-i2"]);
    expect((result.output as { data: { all: unknown[] } }).data.all).toHaveLength(3);
  });

  it("a forEach loop walks a collection from a reference with <loop.item>, its inner graph each time", async () => {
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        pick: block("condition", "Pick", {
          conditions: [{ id: "first", expression: "<loop.index> == 0" }, { id: "later" }],
        }),
        first: block("response", "First", { data: "first <loop.item>" }),
        later: block("response", "Later", { data: "later <loop.item>" }),
      },
      loops: { each: { type: "forEach", nodes: ["pick", "first", "later"], collection: "<start.items>" } },
      edges: [edge("start", "each"), edge("pick", "first", "first"), edge("pick", "later", "later")],
    });

    const { result, logged } = await run(workflowId, { items: ["a", "b", "c"] });

    const loop = spanNamed(logged.entry.traceSpans as SpanJson[], "each");
    expect(loop.children.map((c) => c.id)).toEqual([
      "pick-i0",
      "first-i0",
      "pick-i1",
      "later-i1",
      "pick-i2",
      "later-i2",
    ]);
    expect(result.output).toMatchObject({ data: "later c" });
  });

  it("parallel branches run at the same time, one per collection item, as children of one span", async () => {
    const waiting: Array<() => void> = [];
    const api = await receiver(async (request, response) => {
      // Answers only once all three requests are in: sequential branches would never get there.
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length === 3) for (const release of waiting) release();
      });
      sendJson(response, 200, { got: request.target });
    });
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        fetch: block("api", "Fetch", {
          method: "GET",
          url: `${api.origin}/<parallel.item>`,
          timeoutMs: 5_000,
          retries: 0,
        }),
      },
      parallels: { fan: { type: "collection", nodes: ["fetch"], collection: ["x", "y", "z"] } },
      edges: [edge("start", "fan")],
    });

    const { result, logged } = await run(workflowId);

    expect(result.status).toBe("success");
    const fan = spanNamed(logged.entry.traceSpans as SpanJson[], "fan");
    expect(fan).toMatchObject({ type: "parallel", input: { type: "collection", branches: 3 } });
    expect(fan.children.map((c) => [c.id, (c.output as { data: unknown }).data])).toEqual([
      ["fetch-b0", { got: "/x" }],
      ["fetch-b1", { got: "/y" }],
      ["fetch-b2", { got: "/z" }],
    ]);
    expect(result.output).toEqual({ results: fan.children.map((c) => c.output) });
  });

  it("a count parallel makes that many copies and nests inside a loop", async () => {
    const workflowId = await harness.saveWorkflow({
      blocks: { start: starter, mark: block("response", "Mark", { data: "<loop.index>-<parallel.index>" }) },
      loops: { outer: { type: "for", nodes: ["copies"], iterations: 2 } },
      parallels: { copies: { type: "count", nodes: ["mark"], count: 2 } },
      edges: [edge("start", "outer")],
    });

    const { logged } = await run(workflowId);

    const outer = spanNamed(logged.entry.traceSpans as SpanJson[], "outer");
    expect(outer.children.map((c) => c.id)).toEqual(["copies-i0", "copies-i1"]);
    expect(outer.children[1]?.children.map((c) => [c.id, (c.output as { data: unknown }).data])).toEqual([
      ["mark-i1-b0", "1-0"],
      ["mark-i1-b1", "1-1"],
    ]);
  });
});

describe("Execution engine: failures (D14, D16, D17)", () => {
  it("a failing block fails the execution: level error, httpStatus 500, the span says why", async () => {
    const api = await receiver((_, response) => sendJson(response, 503, { busy: true }));
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        call: block("api", "Call", { method: "GET", url: api.origin, retries: 0 }),
        done: respond("never"),
      },
      edges: [edge("start", "call"), edge("call", "done")],
    });

    const { result, logged } = await run(workflowId);

    expect(result).toMatchObject({ status: "error", httpStatus: 500, error: expect.stringContaining("503") });
    expect(logged.entry.level).toBe("error");
    const call = spanNamed(logged.entry.traceSpans as SpanJson[], "Call");
    expect(call).toMatchObject({ status: "error", output: { status: 503, data: { busy: true } } });
    expect(call.error).toContain("503");
    expect((logged.entry.traceSpans as SpanJson[]).map((s) => s.name)).not.toContain("Respond");
  });

  it("an error edge recovers: the next block reads <api.status> and the execution succeeds", async () => {
    const api = await receiver((_, response) => sendJson(response, 404, { missing: true }));
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        call: block("api", "Call", { method: "GET", url: api.origin }),
        ok: respond("found"),
        fallback: respond({ status: "<call.status>", error: "<call.error>" }),
      },
      edges: [edge("start", "call"), edge("call", "ok"), edge("call", "fallback", "error")],
    });

    const { result, logged } = await run(workflowId);

    expect(api.received).toHaveLength(1);
    expect(result).toMatchObject({ status: "success", httpStatus: 200 });
    expect(result.output).toMatchObject({ data: { status: 404, error: expect.stringContaining("404") } });
    expect(logged.entry.level).toBe("info");
    expect(spanNamed(logged.entry.traceSpans as SpanJson[], "Call").status).toBe("error");
  });

  it("an unresolvable reference fails its block with a message naming it", async () => {
    const workflowId = await harness.saveWorkflow({
      blocks: { start: starter, done: respond("<nowhere.data>") },
      edges: [edge("start", "done")],
    });

    const { result, logged } = await run(workflowId);

    expect(result.status).toBe("error");
    expect(spanNamed(logged.entry.traceSpans as SpanJson[], "Respond").error).toContain("<nowhere.data>");
  });

  it("edges that form a cycle fail the execution, naming the blocks (a loop is how blocks repeat)", async () => {
    const workflowId = await harness.saveWorkflow({
      blocks: { start: starter, a: respond("a"), b: respond("b") },
      edges: [edge("start", "a"), edge("a", "b"), edge("b", "a")],
    });

    const { result, logged } = await run(workflowId);

    expect(result).toMatchObject({ status: "error", error: expect.stringContaining("a, b form a cycle") });
    expect(logged.entry.level).toBe("error");
  });

  it("a start naming a version the workflow does not have is refused: no execution, so no entry (issue 49)", async () => {
    const workflowId = await harness.saveWorkflow({ blocks: { start: starter } });

    const handle = await harness.start(worker.taskQueue, workflowId, {}, { version: 9 });

    // No trigger names a version that was never saved: such a start is not the workspace's, and an error
    // entry would be a stranger's write in its logs, firing its alert rules.
    await expect(handle.result()).rejects.toMatchObject({
      cause: { type: "ExecutionRefused", message: expect.stringContaining(`${workflowId} has no version 9`) },
    });
    expect(await harness.entriesOf(executionIdOf(handle.workflowId))).toEqual([]);
  });
});

describe("Execution engine: an HTTP block's first attempt runs in the execution's workflow task (issue 12)", () => {
  /** The activity types the execution scheduled as activity tasks, in order. */
  async function activityTasks(handle: Awaited<ReturnType<EngineHarness["start"]>>): Promise<string[]> {
    const { events } = await handle.fetchHistory();
    return (events ?? []).flatMap((event) => {
      const scheduled = event.activityTaskScheduledEventAttributes;
      return scheduled ? [scheduled.activityType?.name ?? ""] : [];
    });
  }

  it("a block answered at once schedules no activity task: one workflow task runs the block and the log write", async () => {
    const api = await receiver((_, response) => sendJson(response, 200, { quick: true }));
    const workflowId = await harness.saveWorkflow({
      blocks: { start: starter, call: block("api", "Call", { method: "GET", url: api.origin }) },
      edges: [edge("start", "call")],
    });

    const handle = await harness.start(worker.taskQueue, workflowId);
    const result = await handle.result();

    expect(result).toMatchObject({ status: "success", output: { data: { quick: true }, attempts: 1 } });
    expect(await activityTasks(handle)).toEqual([]);
    const { events } = await handle.fetchHistory();
    expect(events?.filter((event) => event.workflowTaskCompletedEventAttributes)).toHaveLength(1);
    expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
  });

  it("a block that needs a retry goes on as an activity, waiting and counting from where the first try left off", async () => {
    const api = await receiver((_, response, index) =>
      index === 0 ? sendJson(response, 503, { busy: true }) : sendJson(response, 200, { second: true }),
    );
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        call: block("api", "Call", { method: "GET", url: api.origin, retries: 2, retryBaseMs: 100 }),
      },
      edges: [edge("start", "call")],
    });

    const handle = await harness.start(worker.taskQueue, workflowId);
    const result = await handle.result();

    expect(result).toMatchObject({ status: "success", output: { data: { second: true }, attempts: 2 } });
    expect(api.received).toHaveLength(2);
    expect(await activityTasks(handle)).toEqual(["runApiBlock"]);
    const logged = await harness.logged(result);
    expect(spanNamed(logged.entry.traceSpans as SpanJson[], "Call")).toMatchObject({
      status: "success",
      output: { status: 200, attempts: 2 },
    });
  });
});

describe("Execution engine: starting executions (issue 4, item 2)", () => {
  it("starting the same executionId twice runs it once, under execution-<id> with our search attributes", async () => {
    const workflowId = await harness.saveWorkflow({ blocks: { start: starter }, edges: [] });
    const first = await harness.start(worker.taskQueue, workflowId, { n: 1 }, { trigger: "api" });
    const executionId = (await first.result()).executionId;
    const again = await harness.start(
      worker.taskQueue,
      workflowId,
      { n: 2 },
      { executionId, trigger: "api" },
    );

    expect(again.workflowId).toBe(`execution-${executionId}`);
    expect(await again.result()).toMatchObject({ executionId, output: { n: 1 } });
    expect(await harness.entriesOf(executionId)).toHaveLength(1);
    const { typedSearchAttributes } = await first.describe();
    expect(typedSearchAttributes.get(flowlogSearchAttributes.workspaceId)).toBe(harness.account.workspaceId);
    expect(typedSearchAttributes.get(flowlogSearchAttributes.workflowId)).toBe(workflowId);
    expect(typedSearchAttributes.get(flowlogSearchAttributes.trigger)).toBe("api");
  });
});

describe("Execution engine: secrets stay out of Temporal history and logs (D24)", () => {
  it("{{NAME}} reaches the request, but neither the history nor the log entry holds its value", async () => {
    const secret = "sk-live-0123456789abcdef";
    await harness.store.environment.set(harness.account.workspaceId, "SERVICE_TOKEN", secret, Date.now());
    // Echoes what it got: an API that reflects a token must not leak it through outputs either.
    const api = await receiver((request, response) =>
      sendJson(response, 200, { saw: request.headers.authorization }),
    );
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        call: block("api", "Call", {
          method: "GET",
          url: `${api.origin}/items`,
          headers: { Authorization: "Bearer {{SERVICE_TOKEN}}" },
        }),
        done: respond({ echoed: "<call.data.saw>" }),
      },
      edges: [edge("start", "call"), edge("call", "done")],
    });

    const handle = await harness.start(worker.taskQueue, workflowId);
    const result = await handle.result();

    expect(api.received[0]?.headers.authorization).toBe(`Bearer ${secret}`);
    const history = historyText(await handle.fetchHistory());
    expect(history).toContain("Bearer {{SERVICE_TOKEN}}");
    expect(history).toContain(`${api.origin}/items`);
    expect(history).not.toContain(secret);
    const logged = JSON.stringify(await harness.logged(result));
    expect(logged).toContain("Bearer [redacted]");
    expect(logged).not.toContain(secret);
  });

  it("a condition or response block cannot read {{NAME}}: it would run in the workflow", async () => {
    const workflowId = await harness.saveWorkflow({
      blocks: { start: starter, done: respond("{{SERVICE_TOKEN}}") },
      edges: [edge("start", "done")],
    });

    const { result } = await run(workflowId);

    expect(result).toMatchObject({
      status: "error",
      error: expect.stringContaining("{{SERVICE_TOKEN}} cannot be used"),
    });
  });
});

/** Every string of a history, payloads decoded: what the Temporal UI can show. */
function historyText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString("utf8");
  if (Array.isArray(value)) return value.map(historyText).join("\n");
  if (value !== null && typeof value === "object") return Object.values(value).map(historyText).join("\n");
  return "";
}
