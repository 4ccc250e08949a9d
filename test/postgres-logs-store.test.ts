import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/store/database.js";
import type { LogFilter, PageKey, PageRequest } from "../src/store/log-list-sql.js";
import { LogsStore } from "../src/store/logs-store.js";
import { openPostgres } from "../src/store/postgres/database.js";
import { PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import type { ExecutionRecord } from "../src/store/records.js";
import { generatedExecutionList } from "./support/generated-executions.js";
import { keysetOrder, matches } from "./support/log-filter-oracle.js";
import type { PostgresServer } from "./support/postgres.js";
import { sharedPostgres } from "./support/shared-postgres.js";

/** A store of either kind, empty, and what a test needs to see inside it. */
interface OpenedStore {
  logs: LogsStore | PostgresLogsStore;
  storedStates(): Promise<number>;
  /** Saves a workflow of this name under `id`, in a workspace of its own, for the entry view's join. */
  saveWorkflow(id: string, name: string): Promise<void>;
  close(): Promise<void>;
}

const workflowRowSql =
  "INSERT INTO workflows (id, workspace_id, name, description, created_at, updated_at) VALUES ";

let server: PostgresServer;

beforeAll(async () => {
  server = sharedPostgres();
});
afterAll(() => server.stop());

const stores: [string, () => Promise<OpenedStore>][] = [
  [
    "SQLite",
    async () => {
      const db = openDatabase(":memory:");
      return {
        logs: new LogsStore(db),
        storedStates: async () => db.prepare("SELECT count(*) FROM workflow_states").pluck().get() as number,
        saveWorkflow: async (id, name) => {
          db.prepare("INSERT INTO workspaces (id, name, created_at) VALUES (?, 'w', 0)").run(`ws_of_${id}`);
          db.prepare(`${workflowRowSql} (?, ?, ?, 'about it', 0, 0)`).run(id, `ws_of_${id}`, name);
        },
        close: async () => {
          db.close();
        },
      };
    },
  ],
  [
    "PostgreSQL",
    async () => {
      const pool = await openPostgres(await server.createDatabase());
      return {
        logs: new PostgresLogsStore(pool),
        storedStates: async () =>
          (await pool.query<{ n: number }>("SELECT count(*) AS n FROM workflow_states")).rows[0]?.n ?? 0,
        saveWorkflow: async (id, name) => {
          await pool.query("INSERT INTO workspaces (id, name, created_at) VALUES ($1, 'w', 0)", [
            `ws_of_${id}`,
          ]);
          await pool.query(`${workflowRowSql} ($1, $2, $3, 'about it', 0, 0)`, [id, `ws_of_${id}`, name]);
        },
        close: () => pool.end(),
      };
    },
  ],
];

const workspaceId = "ws_contract";
const now = Date.parse("2026-11-20T12:00:00.000Z");

/**
 * Generated executions (bursts on one millisecond among them), plus a burst whose ids differ only where
 * byte order and a language's order disagree (case, '-' and '_'), so the keyset order is held to SQLite's.
 */
async function testExecutions(count: number): Promise<ExecutionRecord[]> {
  const records = await generatedExecutionList({ workspaceId, count, seed: "contract", now, days: 3 });
  const [template] = records;
  if (!template) throw new Error("no executions generated");
  const burst = ["log_B1", "log_a1", "log_A1", "log_-1", "log__1", "log_b1"].map((id) => ({
    ...template,
    entry: { ...template.entry, id, executionId: `ex_${id}`, startedAt: now - 3_600_000 },
  }));
  return [...records, ...burst];
}

/** The filter sets of the logs API (D9), one of each kind and combinations, with values the data has. */
function filterSets(records: ExecutionRecord[]): [string, LogFilter][] {
  const entries = records.map((r) => r.entry);
  const most = (values: (string | null)[]) => {
    const counts = new Map<string, number>();
    for (const value of values) if (value !== null) counts.set(value, (counts.get(value) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1]).map(([value]) => value);
  };
  const [workflow = "", otherWorkflow = ""] = most(entries.map((e) => e.workflowId));
  const [folder = ""] = most(entries.map((e) => e.folderId));
  const [model = ""] = most(entries.flatMap((e) => Object.keys(e.cost.models)));
  const costs = entries.map((e) => e.cost.total).sort((a, b) => a - b);
  const at = (quantile: number) => costs[Math.floor(quantile * (costs.length - 1))] ?? 0;
  const sets: [string, Omit<LogFilter, "workspaceId">][] = [
    ["no filter", {}],
    ["one workflow", { workflowIds: [workflow] }],
    ["two workflows", { workflowIds: [workflow, otherWorkflow] }],
    ["one folder", { folderIds: [folder] }],
    ["level=error", { level: "error" }],
    [
      "trigger and dates",
      { triggers: ["schedule"], startedFrom: now - 2 * 86_400_000, startedTo: now - 86_400_000 },
    ],
    ["two triggers and a level", { triggers: ["api", "chat"], level: "info" }],
    ["cost range", { minCost: at(0.25), maxCost: at(0.75) }],
    ["duration range", { minDurationMs: 100, maxDurationMs: 5_000 }],
    ["model", { model }],
    ["model and a workflow", { model, workflowIds: [workflow] }],
    ["execution id", { executionId: entries[3]?.executionId ?? "" }],
  ];
  return sets.map(([name, filter]) => [name, { workspaceId, ...filter }]);
}

/** Every page of a listing, following `next`. */
async function allPages(logs: OpenedStore["logs"], filter: LogFilter, page: PageRequest) {
  const pages = [];
  let after: PageKey | undefined;
  do {
    const listed = await logs.list(filter, { ...page, after });
    pages.push(listed);
    after = listed.next;
  } while (after);
  return pages;
}

/** What the list must give: the workspace's entries the oracle matches, in keyset order. */
function expectedOrder(records: ExecutionRecord[], filter: LogFilter, order: "asc" | "desc"): string[] {
  const query = { ...filter, startDate: filter.startedFrom, endDate: filter.startedTo };
  return records
    .map((r) => r.entry)
    .filter((e) => e.workspaceId === filter.workspaceId && matches(e, query))
    .sort(keysetOrder(order))
    .map((e) => e.id);
}

const light: PageRequest = {
  order: "desc",
  limit: 25,
  withCostDetail: false,
  withTraceSpans: false,
  withFinalOutput: false,
};

describe.each(stores)("the %s logs store keeps the store contract (D8, D17, issue 15)", (_, open) => {
  let store: OpenedStore;
  let records: ExecutionRecord[];

  beforeAll(async () => {
    store = await open();
    records = await testExecutions(400);
    expect(await store.logs.insertExecutions(records)).toBe(records.length);
  });
  afterAll(() => store.close());

  it("writes an execution once however often the write is retried (D17)", async () => {
    const [record] = await generatedExecutionList({ workspaceId, count: 1, seed: "retry", now });
    if (!record) throw new Error("no execution generated");
    expect(await store.logs.insertExecution(record)).toBe(true);
    const retry = { ...record, entry: { ...record.entry, id: "log_retry" } };
    expect(await store.logs.insertExecution(retry)).toBe(false);
    expect(await store.logs.getEntry("log_retry")).toBeUndefined();
    expect((await store.logs.getExecution(record.entry.executionId))?.entry.id).toBe(record.entry.id);
  });

  it("counts only new executions in a batch: repeats within it and of stored ones are skipped", async () => {
    const [a, b, c] = await generatedExecutionList({ workspaceId, count: 3, seed: "batch", now });
    if (!a || !b || !c) throw new Error("no executions generated");
    const repeat = { ...a, entry: { ...a.entry, id: "log_repeat_in_batch" } };
    expect(await store.logs.insertExecutions([a, b, repeat])).toBe(2);
    expect(await store.logs.insertExecutions([b, c])).toBe(1);
    expect(await store.logs.getEntry(repeat.entry.id)).toBeUndefined();
  });

  it("gives back an entry as written, and each execution's own workflow state", async () => {
    for (const record of records.slice(0, 50)) {
      expect(await store.logs.getEntry(record.entry.id)).toEqual(record.entry);
      const execution = await store.logs.getExecution(record.entry.executionId);
      expect(execution?.workflowState).toEqual(record.workflowState);
      expect(execution?.entry).toEqual({ ...record.entry, traceSpans: [], finalOutput: undefined });
    }
  });

  it("stores each distinct workflow state once, however many executions ran it (issue 15)", async () => {
    const [again, other] = await generatedExecutionList({ workspaceId, count: 2, seed: "states", now });
    if (!again || !other) throw new Error("no executions generated");
    const before = await store.storedStates();
    await store.logs.insertExecution({ ...again, workflowState: structuredClone(records[0]?.workflowState) });
    expect(await store.storedStates()).toBe(before);
    await store.logs.insertExecution({
      ...other,
      workflowState: { blocks: {}, edges: [], only: "this one" },
    });
    expect(await store.storedStates()).toBe(before + 1);
  });

  it("pages each filter set in both orders, by cursor, through exactly the matching entries in keyset order", async () => {
    for (const [name, filter] of filterSets(records)) {
      for (const order of ["asc", "desc"] as const) {
        const pages = await allPages(store.logs, filter, { ...light, order });
        const listed = pages.flatMap((page) => page.entries.map((entry) => entry.id));
        const written = listed.filter((id) => records.some((r) => r.entry.id === id));
        expect(written, `${name}, ${order}`).toEqual(expectedOrder(records, filter, order));
        expect(pages.slice(0, -1).every((page) => page.entries.length === light.limit)).toBe(true);
      }
    }
  });

  it("a list filter of 40,000 workflow ids is one bound value and lists exactly the matching entries (issue 11)", async () => {
    const wanted = [...new Set(records.map((r) => r.entry.workflowId))].slice(0, 2);
    const workflowIds = [...Array.from({ length: 40_000 }, (_, i) => `wf_absent_${i}`), ...wanted];
    const listed = await allPages(store.logs, { workspaceId, workflowIds }, { ...light, limit: 100 });
    const ids = listed.flatMap((page) => page.entries.map((entry) => entry.id));
    const expected = expectedOrder(records, { workspaceId, workflowIds: wanted }, "desc");
    expect(ids.filter((id) => records.some((r) => r.entry.id === id))).toEqual(expected);
  });
});

describe("the PostgreSQL store answers as the SQLite store does for the same executions (issue 15)", () => {
  let sqlite: OpenedStore;
  let postgres: OpenedStore;
  let records: ExecutionRecord[];

  beforeAll(async () => {
    [sqlite, postgres] = (await Promise.all(stores.map(([, open]) => open()))) as [OpenedStore, OpenedStore];
    records = await testExecutions(300);
    for (const store of [sqlite, postgres]) await store.logs.insertExecutions(records);
    // One workflow saved, the others not: the entry view joins the one and leaves the rest without.
    const saved = records[0]?.entry.workflowId ?? "";
    for (const store of [sqlite, postgres]) await store.saveWorkflow(saved, "Saved flow");
  });
  afterAll(async () => {
    await sqlite.close();
    await postgres.close();
  });

  it("the same pages, heavy columns included, for every filter set in both orders", async () => {
    for (const [name, filter] of filterSets(records)) {
      for (const order of ["asc", "desc"] as const) {
        const page = { order, limit: 40, withCostDetail: true, withTraceSpans: true, withFinalOutput: true };
        expect(await allPages(postgres.logs, filter, page), `${name}, ${order}`).toEqual(
          await allPages(sqlite.logs, filter, page),
        );
      }
    }
  });

  it("the same entry, entry view and execution for every id", async () => {
    const saved = await sqlite.logs.getEntryView(records[0]?.entry.id ?? "");
    expect(saved?.workflow).toStrictEqual({
      id: records[0]?.entry.workflowId,
      name: "Saved flow",
      description: "about it",
    });
    for (const { entry } of records) {
      expect(await postgres.logs.getEntry(entry.id)).toEqual(await sqlite.logs.getEntry(entry.id));
      expect(await postgres.logs.getEntryView(entry.id)).toEqual(await sqlite.logs.getEntryView(entry.id));
      expect(await postgres.logs.getExecution(entry.executionId)).toEqual(
        await sqlite.logs.getExecution(entry.executionId),
      );
    }
  });
});
