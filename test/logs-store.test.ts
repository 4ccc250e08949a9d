import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/store/database.js";
import type { LogFilter, PageRequest } from "../src/store/log-list-sql.js";
import type { StatsFilter } from "../src/store/log-stats-sql.js";
import { listQuery } from "../src/store/logs-store.js";
import { migrations } from "../src/store/migrations.js";
import type { LogEntryRecord } from "../src/store/records.js";
import { openSqlite } from "../src/store/sqlite-addon.js";
import { openStore, type Store } from "../src/store/store.js";
import {
  createAccount,
  createWorkflow,
  execution,
  type TestAccount,
  testWorkflowState,
} from "./support/flowlog.js";

let store: Store;
let dataDir: string;
let account: TestAccount;
let workflowId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-store-"));
  store = openStore({ dataDir });
  account = await createAccount(store);
  workflowId = await createWorkflow(store, account.workspaceId);
});
afterAll(() => store.close());

describe("durability (D23)", () => {
  it("keeps the file in WAL mode with the schema migrated", () => {
    const db = openSqlite(path.join(dataDir, "flowlog.sqlite"), { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("user_version", { simple: true })).toBeGreaterThanOrEqual(1);
    db.close();
  });

  it("writes an execution once however often the write is retried (D17)", async () => {
    const record = execution(account, workflowId);
    expect(await store.logs.insertExecution(record)).toBe(true);
    expect(await store.logs.insertExecution({ ...record, entry: { ...record.entry, id: "log_retry" } })).toBe(
      false,
    );
    expect(await store.logs.getEntry("log_retry")).toBeUndefined();
    expect((await store.logs.getExecution(record.entry.executionId))?.entry.id).toBe(record.entry.id);
  });
});

describe("migrations are applied once when processes start together (D23)", () => {
  it("three processes opening a new data dir at the same instant each find both files migrated", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "flowlog-migrate-"));
    const script = path.join(dir, "open-store.mjs");
    writeFileSync(
      script,
      `import { once } from "node:events";
       import { openStore } from ${JSON.stringify(new URL("../src/store/store.ts", import.meta.url).href)};
       process.stdout.write("ready\\n");
       await once(process.stdin, "data");
       const store = openStore({ dataDir: process.argv[2] });
       await store.close();
       process.stdout.write("opened\\n");`,
    );
    const children = [1, 2, 3].map(() =>
      spawn(process.execPath, ["--import", "tsx", script, dir], {
        cwd: fileURLToPath(new URL("..", import.meta.url)),
      }),
    );
    const outputs = children.map((child) => {
      let text = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        text += chunk;
      });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        text += chunk;
      });
      return { child, text: () => text, exited: once(child, "exit") };
    });
    // Three processes compiling the store's sources through tsx: on two loaded cores that took over the
    // 10 s a poll waits by default. A bound for a hang, not a pace.
    await expect.poll(() => outputs.every((o) => o.text().includes("ready")), { timeout: 40_000 }).toBe(true);
    for (const { child } of outputs) child.stdin.end("go\n");
    const codes = await Promise.all(outputs.map(async (o) => (await o.exited)[0]));
    expect(codes, outputs.map((o) => o.text()).join("\n")).toEqual([0, 0, 0]);
    const versionOf = (file: string) => {
      const db = openSqlite(path.join(dir, file), { readonly: true });
      try {
        return db.pragma("user_version", { simple: true });
      } finally {
        db.close();
      }
    };
    expect(versionOf("flowlog.sqlite")).toBe(migrations.length);
    expect(versionOf("flowlog-state.sqlite")).toBe(1);
  });
});

describe("snapshots are stored once per distinct workflow state (D13, issue 15)", () => {
  const countStates = (file: string) => {
    const db = openSqlite(file, { readonly: true });
    try {
      return db.prepare("SELECT count(*) AS n FROM workflow_states").get() as { n: number };
    } finally {
      db.close();
    }
  };

  it("shares one stored state among the executions that ran it, and answers each with it", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "flowlog-states-")), "flowlog.sqlite");
    const own = openStore({ file });
    try {
      const versionOne = testWorkflowState;
      const versionTwo = { ...versionOne, edges: [] };
      // Equal states given as distinct objects, one at a time and in a batch, still store once.
      await own.logs.insertExecution({
        ...execution(account, workflowId),
        workflowState: structuredClone(versionOne),
      });
      const batch = [versionOne, versionTwo, versionOne, structuredClone(versionTwo)].map((state) => ({
        ...execution(account, workflowId),
        workflowState: state,
      }));
      expect(await own.logs.insertExecutions(batch)).toBe(4);
      expect(countStates(file).n).toBe(2);
      for (const record of batch) {
        expect((await own.logs.getExecution(record.entry.executionId))?.workflowState).toEqual(
          record.workflowState,
        );
      }
    } finally {
      await own.close();
    }
  });

  it("moves the copies an older flowlog stored per execution into shared states when it upgrades", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "flowlog-states-")), "flowlog.sqlite");
    const before = migrations.findIndex((sql) => sql.includes("CREATE TABLE workflow_states"));
    const older = openDatabase(file, before);
    const states = [{ blocks: { a: { type: "starter" } } }, { blocks: { b: { type: "api" } } }];
    const executions = ["ex_1", "ex_2", "ex_3"].map((id, i) => ({ id, state: states[i % 2] }));
    for (const { id, state } of executions) {
      older
        .prepare(
          `INSERT INTO log_entries (id, workspace_id, workflow_id, execution_id, level, trigger, started_at, ended_at,
             total_duration_ms, cost_total, cost_json, trace_spans_json)
           VALUES (?, 'ws_1', 'wf_1', ?, 'info', 'api', 0, 1, 1, 0, '{"tokens":{},"models":{}}', '[]')`,
        )
        .run(`log_${id}`, id);
      older.prepare("INSERT INTO execution_snapshots VALUES (?, ?)").run(id, JSON.stringify(state));
    }
    older.close();

    const upgraded = openStore({ file });
    try {
      for (const { id, state } of executions) {
        expect((await upgraded.logs.getExecution(id))?.workflowState).toEqual(state);
      }
    } finally {
      await upgraded.close();
    }
    expect(countStates(file).n).toBe(2);
  });
});

describe("a page reads the columns its answer shows (D9, D30)", () => {
  const page = (detail: boolean): PageRequest => ({
    order: "desc",
    limit: 10,
    withCostDetail: detail,
    withTraceSpans: detail,
    withFinalOutput: detail,
  });

  /** One entry alone in a workspace of its own, with a cost per model and a final output. */
  const onlyEntry = async () => {
    const workspace = await createAccount(store);
    const record = execution(workspace, await createWorkflow(store, workspace.workspaceId), {
      finalOutput: { answer: 42 },
    });
    await store.logs.insertExecution(record);
    return { workspace, record };
  };

  it("without detail, an entry's cost is its total alone and its heavy columns are empty", async () => {
    const { workspace, record } = await onlyEntry();
    const [entry] = (await store.logs.list({ workspaceId: workspace.workspaceId }, page(false))).entries;
    expect(entry?.cost).toStrictEqual({ total: record.entry.cost.total });
    expect(entry?.traceSpans).toEqual([]);
    expect(entry?.finalOutputJson).toBeUndefined();
    expect(listQuery({ workspaceId: workspace.workspaceId }, page(false)).sql).not.toMatch(
      /cost_json|trace_spans_json|final_output_json/,
    );
  });

  it("with detail, an entry is read in full, as one entry is", async () => {
    const { workspace, record } = await onlyEntry();
    const [entry] = (await store.logs.list({ workspaceId: workspace.workspaceId }, page(true))).entries;
    expect(entry).toStrictEqual(viewed(await store.logs.getEntry(record.entry.id)));
    expect((await store.logs.getEntry(record.entry.id))?.cost).toStrictEqual(record.entry.cost);
    expect(entry?.finalOutputJson).toBe('{"answer":42}');
  });
});

describe("the list query reads only the rows of its page (D8)", () => {
  const page = (order: "asc" | "desc", after?: { startedAt: number; id: string }): PageRequest => ({
    order,
    limit: 100,
    after,
    withCostDetail: false,
    withTraceSpans: false,
    withFinalOutput: false,
  });
  const common: [string, Omit<LogFilter, "workspaceId">][] = [
    ["no filter", {}],
    ["one workflow", { workflowIds: ["wf_1"] }],
    ["one folder", { folderIds: ["fld_1"] }],
    ["level=error", { level: "error" }],
    ["trigger and date range", { triggers: ["schedule"], startedFrom: 1, startedTo: 2 }],
    ["cost range", { minCost: 0.01, maxCost: 1 }],
    ["duration range", { minDurationMs: 100, maxDurationMs: 5000 }],
    ["model", { model: "gpt-4o" }],
    ["execution id", { executionId: "ex_1" }],
  ];

  it.each(common)(
    "%s: searches an index, never scans the table or sorts in a temp B-tree",
    async (_, filter) => {
      for (const order of ["asc", "desc"] as const) {
        for (const after of [undefined, { startedAt: 5, id: "log_x" }]) {
          const plan = await store.logs.explainList(
            { workspaceId: account.workspaceId, ...filter },
            page(order, after),
          );
          expect(plan.join("\n")).not.toMatch(/TEMP B-TREE/);
          expect(
            plan.every((step) => step.startsWith("SEARCH")),
            plan.join("\n"),
          ).toBe(true);
        }
      }
    },
  );
});

describe("a page after a cursor within a date range starts the index range at the cursor", () => {
  const range = { startedFrom: 1_000, startedTo: 9_000 };
  const page = (order: "asc" | "desc", after?: { startedAt: number; id: string }): PageRequest => ({
    order,
    limit: 3,
    after,
    withCostDetail: false,
    withTraceSpans: false,
    withFinalOutput: false,
  });

  it("so a deep page reads no row before its cursor: desc from (started_at, id) <, asc from >", async () => {
    // SQLite takes one bound of each side for the range; with the date's, every page scanned from the
    // range's end to its cursor, more with each page.
    const filter = { workspaceId: account.workspaceId, ...range };
    const desc = await store.logs.explainList(filter, page("desc", { startedAt: 5_000, id: "log_x" }));
    expect(desc.join("\n")).toMatch(
      /USING INDEX log_entries_by_time \(workspace_id=\? AND started_at>\? AND \(started_at,id\)<\(\?,\?\)\)/,
    );
    const asc = await store.logs.explainList(filter, page("asc", { startedAt: 5_000, id: "log_x" }));
    expect(asc.join("\n")).toMatch(
      /USING INDEX log_entries_by_time \(workspace_id=\? AND \(started_at,id\)>\(\?,\?\) AND started_at<\?\)/,
    );
  });

  it("and a cursor outside the range still finds only the range's entries", async () => {
    const workspace = await createAccount(store);
    const workflowId = await createWorkflow(store, workspace.workspaceId, "Ranged");
    await store.logs.insertExecutions(
      [500, 1_000, 4_000, 9_000, 9_500].map((startedAt) => execution(workspace, workflowId, { startedAt })),
    );
    const startedAt = async (order: "asc" | "desc", after: number) =>
      (
        await store.logs.list(
          { workspaceId: workspace.workspaceId, ...range },
          { ...page(order, { startedAt: after, id: "log_" }), limit: 10 },
        )
      ).entries.map((entry) => entry.startedAt);
    expect(await startedAt("desc", 20_000)).toEqual([9_000, 4_000, 1_000]);
    expect(await startedAt("desc", 4_000)).toEqual([1_000]);
    expect(await startedAt("asc", 0)).toEqual([1_000, 4_000, 9_000]);
    expect(await startedAt("asc", 4_000)).toEqual([4_000, 9_000]);
  });
});

describe("the log stats read indexes, bounded by the range (issue 17)", () => {
  const range = {
    start: Date.parse("2026-11-01T00:00:00.000Z"),
    end: Date.parse("2026-11-02T00:00:00.000Z"),
  };
  const filters: [string, Omit<StatsFilter, "workspaceId">][] = [
    ["no filter", {}],
    ["one workflow", { workflowIds: ["wf_1"] }],
    ["level=error", { level: "error" }],
    ["two triggers", { triggers: ["api", "chat"] }],
    ["cost range", { minCost: 0.01, maxCost: 1 }],
    ["model", { model: "gpt-4o" }],
  ];
  const plansOf = (filter: Omit<StatsFilter, "workspaceId">) =>
    store.logs.explainStats({ workspaceId: account.workspaceId, ...filter }, range);

  it("without filters the hours read the time index alone, never a row of the table", async () => {
    const [hours] = await plansOf({});
    expect(hours?.join("\n")).toMatch(
      /SEARCH l USING COVERING INDEX log_entries_by_time \(workspace_id=\? AND started_at>\? AND started_at<\?\)/,
    );
  });

  it.each(filters)(
    "%s: every table is searched by index within the range, none scanned",
    async (_, filter) => {
      const [hours, costs] = await plansOf(filter);
      const narrowed = Object.keys(filter).length > 0;
      for (const plan of narrowed ? [hours, costs] : [hours]) {
        expect(plan?.join("\n")).toMatch(/^SEARCH (l|m) .*started_at>\? AND started_at<\?/m);
      }
      for (const plan of [hours, costs]) expect(plan?.join("\n")).not.toMatch(/^SCAN (l|m|c|n)\b/m);
      // The model table is read by its time index alone, within the range.
      expect(costs?.join("\n")).toMatch(
        /SEARCH c USING COVERING INDEX log_entry_models_by_time \(workspace_id=\? AND started_at>\? AND started_at<\?\)/,
      );
    },
  );
});

describe("list filters are one bound value whatever their length (D26, issue 11)", () => {
  const page: PageRequest = {
    order: "desc",
    limit: 100,
    withCostDetail: false,
    withTraceSpans: false,
    withFinalOutput: false,
  };
  const ids = (count: number, prefix = "wf_absent_") =>
    Array.from({ length: count }, (_, i) => `${prefix}${i}`);

  it.each([
    ["workflowIds", { workflowIds: ["wf_1", "wf_2"] }],
    ["folderIds and triggers", { folderIds: ["fld_1", "fld_2"], triggers: ["api", "chat"] }],
    ["workflowIds and a model", { workflowIds: ["wf_1", "wf_2"], model: "gpt-4o" }],
    ["triggers and a level", { triggers: ["api", "schedule"], level: "error" }],
  ] as [string, Omit<LogFilter, "workspaceId">][])(
    "several %s: the rows are searched by index in keyset order; the only scan is of the list itself",
    async (_, filter) => {
      for (const order of ["asc", "desc"] as const) {
        for (const after of [undefined, { startedAt: 5, id: "log_x" }]) {
          const plan = await store.logs.explainList(
            { workspaceId: account.workspaceId, ...filter },
            { ...page, order, after },
          );
          const text = plan.join("\n");
          expect(text).not.toMatch(/TEMP B-TREE/);
          expect(text).toMatch(/^SEARCH l /m);
          const scans = plan.filter((step) => step.startsWith("SCAN"));
          expect(
            scans.every((step) => step.startsWith("SCAN json_each")),
            text,
          ).toBe(true);
        }
      }
    },
  );

  it("the SQL of a list of 2, 100 or 10,000 values is the same statement, with the list as one parameter", () => {
    const sqlOf = (count: number) =>
      listQuery({ workspaceId: account.workspaceId, workflowIds: ids(count) }, page);

    const [two, hundred, tenThousand] = [sqlOf(2), sqlOf(100), sqlOf(10_000)];

    expect(hundred.sql).toBe(two.sql);
    expect(tenThousand.sql).toBe(two.sql);
    expect(Object.keys(tenThousand.params).sort()).toEqual(Object.keys(two.params).sort());
  });

  it("a filter of 10,000 workflow ids (40,000 too, past SQLite's parameter cap) lists exactly the matching entries", async () => {
    const own = await createAccount(store);
    const wanted = [
      await createWorkflow(store, own.workspaceId),
      await createWorkflow(store, own.workspaceId),
    ];
    const other = await createWorkflow(store, own.workspaceId);
    const written = [...wanted, other].map((workflowId) => execution(own, workflowId));
    await store.logs.insertExecutions(written);

    for (const count of [10_000, 40_000]) {
      const workflowIds = [...ids(count - wanted.length), ...wanted];
      const listed = await store.logs.list({ workspaceId: own.workspaceId, workflowIds }, page);
      expect(listed.entries.map((entry) => entry.workflowId).sort()).toEqual([...wanted].sort());
    }
  });
});

/**
 * The entry as getEntryView and a page with spans give it: its spans, which the test writes canonical, as
 * their stored text (issue 13).
 */
/** An entry as the answers read it: its files and final output as the text stored (StoredJsonTexts). */
function shown(entry: LogEntryRecord | undefined) {
  if (!entry) return undefined;
  const { files, finalOutput, ...rest } = entry;
  return {
    ...rest,
    filesJson: files == null ? null : JSON.stringify(files),
    finalOutputJson: finalOutput === undefined ? undefined : JSON.stringify(finalOutput),
  };
}

/** ...and its canonical cost and spans as their text too. */
function viewed(entry: LogEntryRecord | undefined) {
  const entryShown = shown(entry);
  if (!entryShown || !entry) return undefined;
  const { total, tokens, models } = entry.cost;
  return {
    ...entryShown,
    cost: { total, detailJson: JSON.stringify({ tokens, models }) },
    traceSpans: { canonicalJson: JSON.stringify(entry.traceSpans) },
  };
}

describe("one entry as the logs API shows it, in one statement (issue 13)", () => {
  it("is the entry with its workflow's summary, as the two reads apart give them", async () => {
    const flowId = await createWorkflow(store, account.workspaceId, "Invoice sync");
    const record = execution(account, flowId);
    await store.logs.insertExecution(record);
    const [workflow] = await store.workflows.getWorkflowSummaries([flowId]);
    expect(workflow?.name).toBe("Invoice sync");
    expect(await store.logs.getEntryView(record.entry.id)).toStrictEqual({
      entry: viewed(await store.logs.getEntry(record.entry.id)),
      workflow,
    });
  });

  it("hands on trace spans stored as their canonical protobuf JSON as that text, and others parsed", async () => {
    const canonical = execution(account, "wf_canonical");
    await store.logs.insertExecution(canonical);
    const text = JSON.stringify(canonical.entry.traceSpans);
    expect((await store.logs.getEntryView(canonical.entry.id))?.entry.traceSpans).toStrictEqual({
      canonicalJson: text,
    });
    // The same spans with their members out of field-number order: no longer what the writers write.
    const reordered = execution(account, "wf_reordered");
    reordered.entry.traceSpans = canonical.entry.traceSpans.map((span) =>
      Object.fromEntries(Object.entries(span as object).reverse()),
    );
    await store.logs.insertExecution(reordered);
    const view = await store.logs.getEntryView(reordered.entry.id);
    expect(view?.entry.traceSpans).toStrictEqual(reordered.entry.traceSpans);
    expect(view?.entry).toStrictEqual({
      ...viewed(await store.logs.getEntry(reordered.entry.id)),
      traceSpans: reordered.entry.traceSpans,
    });
    // A page that asks for the spans hands them on alike; one that does not reads neither column.
    const listed = async (withTraceSpans: boolean) => {
      const page = await store.logs.list(
        { workspaceId: account.workspaceId },
        { order: "desc", limit: 1000, withCostDetail: false, withTraceSpans, withFinalOutput: false },
      );
      const spansOf = (id: string) => page.entries.find((entry) => entry.id === id)?.traceSpans;
      return [spansOf(canonical.entry.id), spansOf(reordered.entry.id)];
    };
    expect(await listed(true)).toStrictEqual([{ canonicalJson: text }, reordered.entry.traceSpans]);
    expect(await listed(false)).toStrictEqual([[], []]);
  });

  it("hands on a cost stored as its canonical protobuf JSON as that text, and another parsed", async () => {
    const canonical = execution(account, "wf_cost_canonical");
    await store.logs.insertExecution(canonical);
    const { total, tokens, models } = canonical.entry.cost;
    const detailJson = JSON.stringify({ tokens, models });
    expect((await store.logs.getEntryView(canonical.entry.id))?.entry.cost).toStrictEqual({
      total,
      detailJson,
    });
    // The same cost with a model's members out of field-number order: no longer what the writers write.
    const reordered = execution(account, "wf_cost_reordered");
    reordered.entry.cost.models = Object.fromEntries(
      Object.entries(models).map(([model, cost]) => [
        model,
        Object.fromEntries(Object.entries(cost).reverse()),
      ]),
    ) as typeof models;
    await store.logs.insertExecution(reordered);
    const view = await store.logs.getEntryView(reordered.entry.id);
    expect(view?.entry.cost).toStrictEqual(reordered.entry.cost);
    // A page that asks for the cost's detail hands it on alike; one that does not reads the total only.
    const listed = async (withCostDetail: boolean) => {
      const page = await store.logs.list(
        { workspaceId: account.workspaceId },
        { order: "desc", limit: 1000, withCostDetail, withTraceSpans: false, withFinalOutput: false },
      );
      const costOf = (id: string) => page.entries.find((entry) => entry.id === id)?.cost;
      return [costOf(canonical.entry.id), costOf(reordered.entry.id)];
    };
    expect(await listed(true)).toStrictEqual([{ total, detailJson }, reordered.entry.cost]);
    expect(await listed(false)).toStrictEqual([{ total }, { total }]);
  });

  it("keeps a deleted workflow's name, as the entry keeps its workflow (D17)", async () => {
    const flowId = await createWorkflow(store, account.workspaceId, "Retired flow");
    const record = execution(account, flowId);
    await store.logs.insertExecution(record);
    expect(await store.workflows.deleteWorkflow(flowId, Date.now())).toBe(true);
    expect((await store.logs.getEntryView(record.entry.id))?.workflow?.name).toBe("Retired flow");
  });

  it("has no workflow when the workflow row is not there, and no answer for an unknown id", async () => {
    const record = execution(account, "wf_never_saved");
    await store.logs.insertExecution(record);
    const view = await store.logs.getEntryView(record.entry.id);
    expect(view).toStrictEqual({ entry: viewed(await store.logs.getEntry(record.entry.id)) });
    expect(await store.logs.getEntryView("log_unknown")).toBeUndefined();
  });
});
