import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogFilter, PageRequest } from "../src/store/logs-store.js";
import { openStore, type Store } from "../src/store/store.js";
import { createAccount, createWorkflow, execution, type TestAccount } from "./support/flowlog.js";

let store: Store;
let dataDir: string;
let account: TestAccount;
let workflowId: string;

beforeAll(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-store-"));
  store = openStore({ dataDir });
  account = createAccount(store);
  workflowId = createWorkflow(store, account.workspaceId);
});
afterAll(() => store.close());

describe("durability (D23)", () => {
  it("keeps the file in WAL mode with the schema migrated", () => {
    const db = new Database(path.join(dataDir, "flowlog.sqlite"), { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("user_version", { simple: true })).toBeGreaterThanOrEqual(1);
    db.close();
  });

  it("writes an execution once however often the write is retried (D17)", () => {
    const record = execution(account, workflowId);
    expect(store.logs.insertExecution(record)).toBe(true);
    expect(store.logs.insertExecution({ ...record, entry: { ...record.entry, id: "log_retry" } })).toBe(
      false,
    );
    expect(store.logs.getEntry("log_retry")).toBeUndefined();
    expect(store.logs.getExecution(record.entry.executionId)?.entry.id).toBe(record.entry.id);
  });
});

describe("the list query reads only the rows of its page (D8)", () => {
  const page = (order: "asc" | "desc", after?: { startedAt: number; id: string }): PageRequest => ({
    order,
    limit: 100,
    after,
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

  it.each(common)("%s: searches an index, never scans the table or sorts in a temp B-tree", (_, filter) => {
    for (const order of ["asc", "desc"] as const) {
      for (const after of [undefined, { startedAt: 5, id: "log_x" }]) {
        const plan = store.logs.explainList(
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
  });
});
