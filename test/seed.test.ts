import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Command, CommanderError } from "commander";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TraceSpanSchema } from "../gen/flowlog/logs/v1/log_entry_pb.js";
import { WorkflowStateSchema } from "../gen/flowlog/workflows/v1/workflow_pb.js";
import { registerSeedCommand } from "../src/cli/seed.js";
import { loadConfig } from "../src/config/config.js";
import { costOf, executionCost, priceOf } from "../src/domain/model-prices.js";
import type { BlockRequest } from "../src/engine/execution-types.js";
import { asWorkflowState, type SpanJson, type WorkflowStateJson } from "../src/engine/json-shapes.js";
import { type GraphRunResult, runGraph, type SideEffectBlocks } from "../src/engine/run-graph.js";
import { defaultPlanLimits } from "../src/limits/plans.js";
import { defaultQuotas } from "../src/limits/quotas.js";
import { demoWorkflows } from "../src/seed/demo-workflows.js";
import { generateExecutions } from "../src/seed/generate.js";
import { Random } from "../src/seed/random.js";
import { seedWorkspace } from "../src/seed/seed.js";
import { SimulatedClock } from "../src/seed/simulated-clock.js";
import { databaseFile } from "../src/store/database.js";
import { costDetail } from "../src/store/log-rows.js";
import {
  type CanonicalTraceSpans,
  type CostRecord,
  type LogEntryRecord,
  levels,
  type StoredCostRecord,
  triggers,
  type WorkflowRecord,
} from "../src/store/records.js";
import { openStore, type Store } from "../src/store/store.js";

const isoTimestamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const dayMs = 86_400_000;
const now = Date.parse("2026-03-01T12:00:00.000Z");

function freshDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), "flowlog-seed-"));
}

/** A user and a workspace made directly in the store, as `flowlog bootstrap` would. */
async function workspaceIn(store: Store, name: string): Promise<{ workspaceId: string; userId: string }> {
  const userId = `usr_${name}`;
  const workspaceId = `ws_${name}`;
  await store.accounts.createUser({ id: userId, email: `${name}@example.com`, plan: "pro", createdAt: now });
  await store.accounts.createWorkspace({ id: workspaceId, name, createdAt: now }, [userId]);
  return { workspaceId, userId };
}

/** A cost as a page hands it on: its stored text when it is canonical (issue 53), parsed here. */
function parsedCost(cost: CostRecord | StoredCostRecord): CostRecord {
  return "detailJson" in cost ? { total: cost.total, ...JSON.parse(cost.detailJson) } : cost;
}

/** Spans as a page hands them on: their stored text when it is canonical (issue 13), parsed here. */
function parsed(spans: unknown[] | CanonicalTraceSpans): unknown[] {
  return Array.isArray(spans) ? spans : JSON.parse(spans.canonicalJson);
}

/** Every entry of the workspace, oldest first, by walking the keyset pages (D8). */
async function allEntries(store: Store, workspaceId: string): Promise<LogEntryRecord[]> {
  const entries: LogEntryRecord[] = [];
  let after: { startedAt: number; id: string } | undefined;
  do {
    const page = await store.logs.list(
      { workspaceId },
      { order: "asc", limit: 1000, after, withCostDetail: true, withTraceSpans: true, withFinalOutput: true },
    );
    entries.push(
      ...page.entries.map(({ filesJson, finalOutputJson, ...e }) => ({
        ...e,
        cost: parsedCost(costDetail(e.cost)),
        traceSpans: parsed(e.traceSpans),
        files: filesJson === null ? null : JSON.parse(filesJson),
        finalOutput: finalOutputJson === undefined ? undefined : JSON.parse(finalOutputJson),
      })),
    );
    after = page.next;
  } while (after);
  return entries;
}

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

function flatten(spans: SpanJson[]): SpanJson[] {
  return spans.flatMap((span) => [span, ...flatten(span.children)]);
}

const spansOf = (entry: LogEntryRecord) => flatten(entry.traceSpans as SpanJson[]);

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

async function rejection(call: Promise<unknown>): Promise<ConnectError> {
  const error = await call.then(
    () => new Error("the call was not refused"),
    (reason: unknown) => reason,
  );
  if (error instanceof ConnectError) return error;
  throw error;
}

/**
 * The engine run again on the entry's workflow, its api and agent blocks answering with what the entry's
 * spans recorded for them at the same simulated times: the seeded entry must be exactly that run.
 */
async function replay(entry: LogEntryRecord, state: WorkflowStateJson): Promise<GraphRunResult> {
  const recorded = spansOf(entry).filter((s) => s.type === "api" || s.type === "agent");
  const clock = new SimulatedClock(entry.startedAt);
  const answer = async (request: BlockRequest) => {
    const span = recorded.find(
      (s) => s.id.split("-")[0] === request.blockId && Date.parse(s.startTime) === clock.now(),
    );
    if (!span) throw new Error(`no recorded run of ${request.blockId} at ${clock.now()}`);
    recorded.splice(recorded.indexOf(span), 1);
    await clock.sleep(span.durationMs);
    return span.error === undefined ? { output: span.output } : { output: span.output, error: span.error };
  };
  const starter = spansOf(entry).find((s) => s.type === "starter");
  const run = await clock.run(
    runGraph(state, {
      workspaceId: entry.workspaceId,
      input: starter?.output ?? null,
      blocks: { api: answer, agent: answer } as SideEffectBlocks,
      now: clock.now,
      maxBlockRuns: defaultQuotas.workflow.maxBlockRuns,
    }),
  );
  expect(recorded).toEqual([]);
  return run;
}

describe("model prices", () => {
  it("prices a call per million tokens, input and output apart", () => {
    expect(costOf("gpt-4o", 1_000_000, 1_000_000)).toEqual({ input: 2.5, output: 10, total: 12.5 });
    expect(costOf("claude-sonnet-4", 2_000, 500)).toEqual({ input: 0.006, output: 0.0075, total: 0.0135 });
  });

  it("matches a provider's dated model name to its base name, the longest first", () => {
    expect(priceOf("gpt-4o-mini-2024-07-18")).toEqual(priceOf("gpt-4o-mini"));
    expect(priceOf("claude-sonnet-4-20250514")).toEqual(priceOf("claude-sonnet-4"));
    expect(priceOf("gpt-4o-2024-08-06")).toEqual(priceOf("gpt-4o"));
  });

  it("costs an unpriced model nothing instead of failing the execution", () => {
    expect(priceOf("my-local-llama")).toBeUndefined();
    expect(costOf("my-local-llama", 1000, 1000)).toEqual({ input: 0, output: 0, total: 0 });
  });

  it("sums an execution's calls per model, with total equal to the sum of the models' totals", () => {
    const cost = executionCost([
      { model: "gpt-4o-mini", promptTokens: 1000, completionTokens: 200 },
      { model: "gpt-4o-mini", promptTokens: 500, completionTokens: 100 },
      { model: "claude-3-5-haiku", promptTokens: 800, completionTokens: 300 },
    ]);
    expect(Object.keys(cost.models)).toEqual(["gpt-4o-mini", "claude-3-5-haiku"]);
    expect(cost.models["gpt-4o-mini"]?.tokens).toEqual({ prompt: 1500, completion: 300, total: 1800 });
    expect(cost.tokens).toEqual({ prompt: 2300, completion: 600, total: 2900 });
    expect(cost.total).toBeCloseTo(0.002245, 12);
    expect(executionCost([])).toEqual({
      total: 0,
      tokens: { prompt: 0, completion: 0, total: 0 },
      models: {},
    });
  });
});

describe("seeded log entries (issue 3, item 7; spec 'Log entry'; D17)", () => {
  const executions = 1500;
  const days = 7;
  let store: Store;
  let workspaceId: string;
  let userId: string;
  let entries: LogEntryRecord[];
  let workflows: Map<string, WorkflowRecord>;
  beforeAll(async () => {
    store = openStore({ file: databaseFile(freshDataDir()) });
    ({ workspaceId, userId } = await workspaceIn(store, "demo"));
    const result = await seedWorkspace(store, {
      workspaceId,
      executions,
      workflows: 5,
      days,
      seed: "test",
      now,
    });
    expect(result).toEqual({ seed: "test", workflowsCreated: 5, executionsWritten: executions });
    entries = await allEntries(store, workspaceId);
    workflows = new Map((await store.workflows.listWorkflows(workspaceId)).map((w) => [w.id, w]));
  });
  afterAll(() => store.close());

  it("writes exactly N log entries, each with its snapshot, readable through the store", async () => {
    expect(entries).toHaveLength(executions);
    expect(new Set(entries.map((e) => e.id)).size).toBe(executions);
    for (const entry of entries) {
      const execution = await store.logs.getExecution(entry.executionId);
      expect(execution?.entry.id).toBe(entry.id);
      expect(execution?.workflowState).toEqual(workflows.get(entry.workflowId)?.state);
      expect(await store.logs.getEntry(entry.id)).toEqual(entry);
    }
  });

  it("creates the workflows in folders, each a graph in the protobuf JSON of WorkflowState (D13)", () => {
    expect(workflows.size).toBe(5);
    const folders = new Set([...workflows.values()].map((w) => w.folderId));
    expect(folders.size).toBe(3);
    expect(folders).toContain(null);
    for (const workflow of workflows.values()) {
      const state = fromJson(WorkflowStateSchema, workflow.state as JsonValue);
      expect(Object.values(state.blocks).map((b) => b.type)).toContain("starter");
    }
    const states = [...workflows.values()].map((w) => fromJson(WorkflowStateSchema, w.state as JsonValue));
    expect(states.some((s) => Object.keys(s.loops).length > 0)).toBe(true);
    expect(states.some((s) => Object.keys(s.parallels).length > 0)).toBe(true);
  });

  it("keeps every value within the spec's enumerations, with each trigger and both levels present", () => {
    for (const entry of entries) {
      expect(levels).toContain(entry.level);
      expect(triggers).toContain(entry.trigger);
      expect(entry.totalDurationMs).toBe(entry.endedAt - entry.startedAt);
      expect(entry.startedAt).toBeGreaterThanOrEqual(now - days * dayMs);
      expect(entry.endedAt).toBeLessThanOrEqual(now);
    }
    const byTrigger = groupBy(entries, (e) => e.trigger);
    expect([...byTrigger.keys()].sort()).toEqual([...triggers].sort());
    const largest = [...byTrigger].sort((a, b) => b[1].length - a[1].length)[0]?.[0];
    expect(largest).toBe("api");
    const errorShare = entries.filter((e) => e.level === "error").length / executions;
    expect(errorShare).toBeGreaterThan(0.04);
    expect(errorShare).toBeLessThan(0.13);
  });

  it("has a long tail of durations", () => {
    const durations = entries.map((e) => e.totalDurationMs).sort((a, b) => a - b);
    const median = durations[Math.floor(durations.length / 2)] as number;
    const p99 = durations[Math.floor(durations.length * 0.99)] as number;
    expect(p99).toBeGreaterThan(5 * median);
  });

  it("starts some executions in bursts on the exact same millisecond (D8)", () => {
    const starts = groupBy(entries, (e) => e.startedAt);
    const shared = [...starts.values()].filter((group) => group.length > 1);
    expect(shared.length).toBeGreaterThan(5);
    expect(Math.max(...shared.map((group) => group.length))).toBeGreaterThanOrEqual(3);
  });

  it("bills no one, so demo data never uses up a member's plan (D12), and files the entry under its workflow's folder", async () => {
    for (const entry of entries) {
      expect(entry.billedUserId).toBeNull();
      expect(entry.folderId).toBe(workflows.get(entry.workflowId)?.folderId);
    }
    // More than the free plan's month: billed, the member could run nothing after seeding.
    expect(entries.reduce((sum, e) => sum + e.cost.total, 0)).toBeGreaterThan(
      defaultPlanLimits.free.usageLimitUsd,
    );
    const bucket = { key: `sync:${userId}`, shape: defaultPlanLimits.pro.syncExecutions };
    for (const { startedAt: nowMs } of entries) {
      const usage = await store.usage.snapshot({ userId, nowMs, sync: bucket, async: bucket });
      expect(usage.periodCost).toBe(0);
    }
    const withFiles = entries.filter((e) => e.files !== null).length;
    expect(withFiles).toBeLessThan(executions * 0.1);
  });

  it("has cost.total equal to the sum of the models' totals, and token totals that add up", () => {
    for (const { cost } of entries) {
      const models = Object.values(cost.models);
      expect(cost.total).toBeCloseTo(
        models.reduce((sum, m) => sum + m.total, 0),
        9,
      );
      expect(cost.tokens.total).toBe(models.reduce((sum, m) => sum + m.tokens.total, 0));
      expect(cost.tokens.total).toBe(cost.tokens.prompt + cost.tokens.completion);
      for (const m of models) expect(m.total).toBeCloseTo(m.input + m.output, 9);
    }
    const models = new Set(entries.flatMap((e) => Object.keys(e.cost.models)));
    expect(models.size).toBeGreaterThanOrEqual(4);
  });

  it("costs nothing for workflows without an agent, and agent spans that answered carry model, tokens and cost", () => {
    const agentless = [...workflows.values()].filter(
      (w) => !JSON.stringify(w.state).includes('"type":"agent"'),
    );
    expect(agentless.length).toBeGreaterThan(0);
    const free = entries.filter((e) => agentless.some((w) => w.id === e.workflowId));
    expect(free.length).toBeGreaterThan(0);
    for (const entry of free)
      expect(entry.cost).toEqual({ total: 0, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} });
    for (const entry of entries) {
      const agents = spansOf(entry).filter((s) => s.type === "agent" && s.status === "success");
      for (const span of agents) {
        expect(typeof span.model).toBe("string");
        expect(span.tokens?.total).toBe((span.tokens?.prompt ?? 0) + (span.tokens?.completion ?? 0));
        expect(typeof span.cost).toBe("number");
      }
      const spanCost = agents.reduce((sum, s) => sum + (s.cost ?? 0), 0);
      expect(entry.cost.total).toBeCloseTo(spanCost, 6);
    }
  });

  it("has trace spans in the protobuf JSON of TraceSpan with ISO millisecond times (D7, D17)", () => {
    for (const entry of entries) {
      for (const span of entry.traceSpans) fromJson(TraceSpanSchema, span as JsonValue);
      for (const span of spansOf(entry)) {
        expect(span.startTime).toMatch(isoTimestamp);
        expect(span.endTime).toMatch(isoTimestamp);
        expect(span.durationMs).toBe(Date.parse(span.endTime) - Date.parse(span.startTime));
        expect(["success", "error"]).toContain(span.status);
        expect(Date.parse(span.startTime)).toBeGreaterThanOrEqual(entry.startedAt);
        expect(Date.parse(span.endTime)).toBeLessThanOrEqual(entry.endedAt);
      }
    }
  });

  it("nests loop iterations and parallel branches as children", () => {
    const groups = entries.flatMap(spansOf).filter((s) => s.type === "loop" || s.type === "parallel");
    expect(new Set(groups.map((s) => s.type))).toEqual(new Set(["loop", "parallel"]));
    expect(groups.filter((s) => s.status === "success").every((s) => s.children.length >= 2)).toBe(true);
  });

  it("is at error level exactly when a block failed, and stops at that block", () => {
    for (const entry of entries) {
      const failed = spansOf(entry).filter((s) => s.status === "error" && s.children.length === 0);
      expect(failed.length).toBe(entry.level === "error" ? 1 : 0);
      if (failed[0]) expect(failed[0].error).toEqual(expect.any(String));
    }
  });

  it("has the response block's output as finalOutput, else the last top-level node's", () => {
    for (const entry of entries) {
      const response = spansOf(entry).findLast((s) => s.type === "response" && s.status === "success");
      const spans = entry.traceSpans as SpanJson[];
      expect(entry.finalOutput).toEqual((response ?? spans[spans.length - 1])?.output);
    }
  });

  it("adds nothing when re-run with the same seed, and no workflows once there are enough", async () => {
    const again = await seedWorkspace(store, {
      workspaceId,
      executions,
      workflows: 5,
      days,
      seed: "test",
      now,
    });
    expect(again).toEqual({ seed: "test", workflowsCreated: 0, executionsWritten: 0 });
    expect(await allEntries(store, workspaceId)).toHaveLength(executions);
  });

  it("tops up to more workflows and adds new executions under another seed", async () => {
    const more = await seedWorkspace(store, {
      workspaceId,
      executions: 100,
      workflows: 7,
      days,
      seed: "more",
      now,
    });
    expect(more).toEqual({ seed: "more", workflowsCreated: 2, executionsWritten: 100 });
    expect(await store.workflows.listWorkflows(workspaceId)).toHaveLength(7);
  });

  it("refuses an unknown workspace and out-of-range counts", async () => {
    expect((await rejection(seedWorkspace(store, { workspaceId: "ws_nope", executions: 1 }))).code).toBe(
      Code.NotFound,
    );
    const bad = await rejection(seedWorkspace(store, { workspaceId, executions: -1, workflows: 0, days: 0 }));
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.rawMessage).toContain("workflows must be an integer from 1 to 1000");
  });
});

describe("seeded executions are runs of the engine (issue 14, item 4)", () => {
  let store: Store;
  let workspaceId: string;
  let entries: LogEntryRecord[];
  let states: Map<string, WorkflowStateJson>;
  beforeAll(async () => {
    store = openStore({ file: databaseFile(freshDataDir()) });
    ({ workspaceId } = await workspaceIn(store, "engine"));
    await seedWorkspace(store, { workspaceId, executions: 400, workflows: 5, days: 2, seed: "engine", now });
    entries = await allEntries(store, workspaceId);
    states = new Map(
      (await store.workflows.listWorkflows(workspaceId)).map((w) => [w.id, asWorkflowState(w.state)]),
    );
  });
  afterAll(() => store.close());

  it("has the spans, final output, level and cost the engine makes of the simulated outcomes", async () => {
    const levels = new Set<string>();
    for (const entry of entries) {
      const run = await replay(entry, states.get(entry.workflowId) as WorkflowStateJson);
      expect(entry.traceSpans).toEqual(run.spans);
      expect(entry.finalOutput).toEqual(run.finalOutput);
      expect(entry.level).toBe(run.status === "error" ? "error" : "info");
      expect(entry.cost).toEqual(executionCost(run.usages));
      levels.add(entry.level);
    }
    expect(levels).toEqual(new Set(["info", "error"]));
  });

  it("writes what the generator makes from the same seed", async () => {
    const generated = await collect(
      generateExecutions(new Random(`engine:${workspaceId}:executions`), {
        workflows: await store.workflows.listWorkflows(workspaceId),
        count: 400,
        days: 2,
        now,
        billedUserId: null,
      }),
    );
    const byStart = (a: LogEntryRecord, b: LogEntryRecord) =>
      a.startedAt - b.startedAt || a.id.localeCompare(b.id);
    // Through JSON, as the store keeps them.
    const expected = JSON.parse(JSON.stringify(generated.map((r) => r.entry))) as LogEntryRecord[];
    expect(entries.sort(byStart)).toEqual(expected.sort(byStart));
  });
});

describe("the generator is deterministic", () => {
  const workflows = demoWorkflows(new Random("workflows"), {
    workspaceId: "ws_x",
    folders: [null],
    existing: 0,
    count: 5,
    now,
  });
  const generate = (seed: string) =>
    collect(
      generateExecutions(new Random(seed), { workflows, count: 300, days: 3, now, billedUserId: null }),
    );

  it("gives the same executions, identifiers included, for the same seed", async () => {
    expect(await generate("s1")).toEqual(await generate("s1"));
  });

  it("gives other executions for another seed", async () => {
    expect((await generate("s2"))[0]?.entry.id).not.toBe((await generate("s1"))[0]?.entry.id);
  });
});

describe("flowlog seed (CLI)", () => {
  const dataDir = freshDataDir();
  let workspaceId: string;
  beforeAll(async () => {
    const store = openStore({ dataDir });
    ({ workspaceId } = await workspaceIn(store, "cli"));
    await store.close();
  });

  /** The command on a fresh program, in this process, with its exits turned into exceptions. */
  async function seedInProcess(
    ...args: string[]
  ): Promise<{ stdout: string; stderr: string; error?: unknown }> {
    const stderr: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const program = new Command("flowlog")
      .exitOverride()
      .configureOutput({ writeErr: (text) => stderr.push(text), writeOut: () => {} });
    registerSeedCommand(program, async () => ({
      config: loadConfig({ FLOWLOG_DATA_DIR: dataDir }),
      store: openStore({ dataDir }),
    }));
    try {
      await program.parseAsync(["seed", ...args], { from: "user" });
      return { stdout: log.mock.calls.join("\n"), stderr: stderr.join("") };
    } catch (error) {
      return { stdout: log.mock.calls.join("\n"), stderr: stderr.join(""), error };
    } finally {
      log.mockRestore();
    }
  }

  it("writes the executions and prints rows per second", async () => {
    const args = ["--workspace", workspaceId, "--executions", "400", "--workflows", "3", "--days", "2"];
    const { stdout, error } = await seedInProcess(...args);
    expect(error).toBeUndefined();
    expect(stdout).toMatch(
      /seeded 400 executions \(3 new workflows\) into ws_cli in [\d.]+ s: [\d,]+ rows\/s/,
    );
    const store = openStore({ dataDir });
    expect(await allEntries(store, workspaceId)).toHaveLength(400);
    expect(await store.workflows.listWorkflows(workspaceId)).toHaveLength(3);
    await store.close();
  });

  it("refuses an unknown workspace with a clear message and exit code 2", async () => {
    const { stderr, error } = await seedInProcess("--workspace", "ws_nope", "--executions", "10");
    expect(error).toBeInstanceOf(CommanderError);
    expect((error as CommanderError).exitCode).toBe(2);
    expect(stderr).toContain("error: workspace ws_nope does not exist");
  });

  it("refuses a count that is not a whole number", async () => {
    const { stderr, error } = await seedInProcess("--workspace", workspaceId, "--executions", "ten");
    expect(error).toBeInstanceOf(CommanderError);
    expect(stderr).toContain("must be a whole number");
  });

  it("works end to end through bin/flowlog.js", async () => {
    const env = { ...process.env, FLOWLOG_DATA_DIR: dataDir };
    const run = (...args: string[]) =>
      promisify(execFile)("node", ["bin/flowlog.js", "seed", ...args], { env }).then(
        ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
        (failed: { code: number; stdout: string; stderr: string }) => failed,
      );
    const ok = await run("--workspace", workspaceId, "--executions", "250", "--days", "1");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/seeded 250 executions .* rows\/s/);
    const refused = await run("--workspace", "ws_nope", "--executions", "10");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("workspace ws_nope does not exist");
  });
});
