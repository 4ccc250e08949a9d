import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { BlockJson, SpanJson } from "../src/engine/json-shapes.js";
import { databaseFile } from "../src/store/database.js";
import { openSqlite } from "../src/store/sqlite-addon.js";
import { agentBaseUrlVariable } from "../src/temporal/activities/block-activities.js";
import { EngineHarness, type RunningWorker, startWorker, testDeps } from "./support/engine.js";
import { receiversClosedAfterAll, sendJson } from "./support/http-receiver.js";

const temporal = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const block = (type: string, name: string, config: JsonObject = {}): BlockJson => ({
  type,
  name,
  config,
  enabled: true,
});
const starter = block("starter", "Start");

let harness: EngineHarness;
let worker: RunningWorker;
const receiver = receiversClosedAfterAll();

beforeAll(async () => {
  harness = await EngineHarness.connect(temporal);
  // The default quotas (D26): 1,000 block runs per execution.
  worker = await startWorker(temporal, testDeps(harness.store));
});

afterAll(async () => {
  await worker?.stop();
  await harness?.close();
});

const run = (workflowId: string, input: JsonObject = {}) => harness.run(worker.taskQueue, workflowId, input);

describe("Bounded executions at run time (D26)", () => {
  it("a forEach over a 5,000-item input stops at 1,000 block runs: an error entry naming the limit", async () => {
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        check: block("condition", "Check", {
          conditions: [{ id: "positive", expression: "<loop.item> > 0" }, { id: "else" }],
        }),
        after: block("response", "After", { data: "never reached" }),
      },
      edges: [
        { source: "start", target: "items" },
        // Not even an error edge goes on past the limit.
        { source: "items", target: "after", sourceHandle: "error" },
      ],
      loops: { items: { type: "forEach", nodes: ["check"], collection: "<start.items>" } },
    });
    const items = Array.from({ length: 5_000 }, (_, i) => i + 1);

    const { result, logged } = await run(workflowId, { items });

    const limit = "the execution stopped at its limit of 1000 block runs";
    expect(result).toMatchObject({ status: "error", httpStatus: 500, error: limit });
    expect(logged.entry.level).toBe("error");
    const [start, loop, ...rest] = logged.entry.traceSpans as SpanJson[];
    expect(start?.type).toBe("starter");
    expect(loop).toMatchObject({ type: "loop", status: "error", error: limit });
    // The starter and 999 iterations: 1,000 block runs, and the 1,001st never ran.
    expect(loop?.children).toHaveLength(999);
    expect(rest).toEqual([]);
  });

  it("block ids such as constructor and __proto__ are blocks like any other, not Object.prototype members", async () => {
    const api = await receiver((request, response) => sendJson(response, 200, { path: request.target }));
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: starter,
        constructor: block("api", "First", { method: "GET", url: `${api.origin}/first` }),
        ["__proto__"]: block("api", "Second", { method: "GET", url: `${api.origin}/second` }),
        toString: block("response", "Done", { data: ["<first.data.path>", "<second.data.path>"] }),
      },
      edges: [
        { source: "start", target: "constructor" },
        { source: "constructor", target: "__proto__" },
        { source: "__proto__", target: "toString" },
      ],
    });

    const { result, logged } = await run(workflowId);

    expect(result).toMatchObject({ status: "success", output: { data: ["/first", "/second"] } });
    expect((logged.entry.traceSpans as SpanJson[]).map((s) => s.id)).toEqual([
      "start",
      "constructor",
      "__proto__",
      "toString",
    ]);
  });
});

describe("A log write never retries for ever (D17, issue 11)", () => {
  it.each(["constructor", "__proto__"])(
    "an agent answering with model %j is logged at cost 0, and the sync call answers",
    async (model) => {
      const provider = await receiver((_, response) =>
        sendJson(response, 200, {
          model,
          choices: [{ message: { role: "assistant", content: "hello" } }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
      await harness.store.environment.set(
        harness.account.workspaceId,
        agentBaseUrlVariable,
        provider.origin,
        Date.now(),
      );
      const workflowId = await harness.saveWorkflow({
        blocks: { start: starter, answer: block("agent", "Answer", { model: "any", prompt: "hi" }) },
        edges: [{ source: "start", target: "answer" }],
      });

      const { result, logged } = await run(workflowId);

      expect(result.status).toBe("success");
      expect(logged.entry.level).toBe("info");
      expect(logged.entry.cost.total).toBe(0);
      const tokens = { prompt: 10, completion: 5, total: 15 };
      expect(Object.entries(logged.entry.cost.models)).toEqual([
        [model, { input: 0, output: 0, total: 0, tokens }],
      ]);
    },
  );

  it("an entry the store refuses is written once as an error entry saying why, and the sync call answers", async () => {
    // A real refusal by the database under the store: it takes no entry whose spans mention "poison".
    const db = openSqlite(databaseFile(harness.dataDir));
    db.exec(`CREATE TRIGGER refuse_poison BEFORE INSERT ON log_entries
      WHEN NEW.trace_spans_json LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'poisoned entry refused'); END`);
    try {
      const workflowId = await harness.saveWorkflow({
        blocks: { start: starter, done: block("response", "Done", { data: "poison" }) },
        edges: [{ source: "start", target: "done" }],
      });

      const { result, logged } = await run(workflowId);

      expect(result.status).toBe("success");
      expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
      expect(logged.entry).toMatchObject({ level: "error", traceSpans: [] });
      expect(logged.entry.finalOutput).toEqual({
        error: expect.stringContaining(
          "the store refused this execution's log entry (poisoned entry refused)",
        ),
      });
    } finally {
      db.exec("DROP TRIGGER refuse_poison");
      db.close();
    }
  });
});
