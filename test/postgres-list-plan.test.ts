import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogFilter, PageRequest } from "../src/store/log-list-sql.js";
import type { StatsFilter } from "../src/store/log-stats-sql.js";
import { openPostgres, type PostgresPool } from "../src/store/postgres/database.js";
import { PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import type { ExecutionRecord } from "../src/store/records.js";
import { type SearchTerm, searchTermsOf } from "../src/store/search-words.js";
import { generatedExecutions } from "./support/generated-executions.js";
import type { PostgresServer } from "./support/postgres.js";
import { sharedPostgres } from "./support/shared-postgres.js";

/**
 * PostgreSQL plans by statistics, so the plans are taken on a table of realistic size and spread
 * (generated executions, analysed), where a page's rows are few among many, as in use; on a nearly
 * empty table any plan is as good and the planner may take a scan.
 */
const executions = 10_000;
const workspaceId = "ws_plans";
const now = Date.parse("2026-11-20T12:00:00.000Z");
const dayMs = 86_400_000;

let server: PostgresServer;
let pool: PostgresPool;
let logs: PostgresLogsStore;
let sample: ExecutionRecord[];

beforeAll(async () => {
  server = sharedPostgres();
  pool = await openPostgres(await server.createDatabase());
  logs = new PostgresLogsStore(pool);
  let batch: ExecutionRecord[] = [];
  sample = [];
  for await (const record of generatedExecutions({ workspaceId, count: executions, seed: "plans", now })) {
    batch.push(record);
    if (sample.length < 100) sample.push(record);
    if (batch.length === 2_000) {
      await logs.insertExecutions(batch);
      batch = [];
    }
  }
  await logs.insertExecutions(batch);
  await pool.query("ANALYZE");
});
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

describe("the list query reads only the rows of its page (D8), on PostgreSQL too (issue 15)", () => {
  const page = (order: "asc" | "desc", after?: PageRequest["after"]): PageRequest => ({
    order,
    limit: 100,
    after,
    withCostDetail: false,
    withTraceSpans: false,
    withFinalOutput: false,
  });
  const first = () => sample[0]?.entry ?? { workflowId: "", folderId: null, executionId: "" };
  /** Filter set -> the index whose (started_at, id) order the page is read in. */
  const folder = () => sample.find((r) => r.entry.folderId)?.entry.folderId ?? "";
  const model = () => sample.flatMap((r) => Object.keys(r.entry.cost.models))[0] ?? "";
  const workflows = () => [...new Set(sample.map((r) => r.entry.workflowId))].slice(0, 2);
  /** Filter set, the index whose (started_at, id) order its pages are read in, and the filter. */
  const common: [string, string, () => Omit<LogFilter, "workspaceId">][] = [
    ["no filter", "log_entries_by_time", () => ({})],
    ["one workflow", "log_entries_by_workflow", () => ({ workflowIds: [first().workflowId] })],
    ["one folder", "log_entries_by_folder", () => ({ folderIds: [folder()] })],
    ["level=error", "log_entries_by_level", () => ({ level: "error" })],
    [
      "trigger and date range",
      "log_entries_by_trigger",
      () => ({ triggers: ["schedule"], startedFrom: now - 20 * dayMs, startedTo: now - 5 * dayMs }),
    ],
    ["cost range", "log_entries_by_time", () => ({ minCost: 0.0001, maxCost: 1 })],
    ["duration range", "log_entries_by_time", () => ({ minDurationMs: 100, maxDurationMs: 60_000 })],
    ["model", "log_entry_models_pkey", () => ({ model: model() })],
    ["several workflows", "log_entries_by_time", () => ({ workflowIds: workflows() })],
    [
      "several triggers and a level",
      "log_entries_by_level",
      () => ({ triggers: ["api", "chat"], level: "error" }),
    ],
  ];

  const plans = async (filter: Omit<LogFilter, "workspaceId">) => {
    const middle = { startedAt: now - 15 * dayMs, id: "log_x" };
    const all: string[] = [];
    for (const order of ["asc", "desc"] as const) {
      for (const after of [undefined, middle]) {
        all.push((await logs.explainList({ workspaceId, ...filter }, page(order, after))).join("\n"));
      }
    }
    return all;
  };

  it.each(common)(
    "%s: walks %s in keyset order, both ways, without a sort or a scan",
    async (_, index, filter) => {
      for (const plan of await plans(filter())) {
        expect(plan).toMatch(new RegExp(`Index (Only )?Scan (Backward )?using ${index} `));
        expect(plan).not.toMatch(/Sort|Seq Scan|Bitmap/);
      }
    },
  );

  it("execution id: the unique index finds the one row, which is all there is to order", async () => {
    for (const plan of await plans({ executionId: first().executionId })) {
      expect(plan).toMatch(/Index Scan using log_entries_execution_id_key .*\(cost=[\d.]+ rows=1 /s);
      expect(plan).not.toMatch(/Seq Scan|Bitmap/);
    }
  });
});

describe("the log stats read indexes bounded by their range, on PostgreSQL too (issue 17)", () => {
  // A day of the 30 the table holds: the rows a chart's day reads are few among many, as in use.
  const end = Math.floor((now - 5 * dayMs) / 3_600_000) * 3_600_000;
  const range = { start: end - dayMs, end };
  const filters: [string, () => Omit<StatsFilter, "workspaceId">][] = [
    ["no filter", () => ({})],
    ["one workflow", () => ({ workflowIds: [sample[0]?.entry.workflowId ?? ""] })],
    ["level=error", () => ({ level: "error" })],
    ["two triggers", () => ({ triggers: ["api", "chat"] })],
    ["cost range", () => ({ minCost: 0.0001, maxCost: 1 })],
    ["model", () => ({ model: sample.flatMap((r) => Object.keys(r.entry.cost.models))[0] ?? "" })],
  ];

  it("without filters the hours read the time index alone", async () => {
    const [hours] = await logs.explainStats({ workspaceId }, range);
    expect(hours?.join("\n")).toMatch(/Index Only Scan using log_entries_by_time on log_entries l/);
  });

  it.each(filters)(
    "%s: no table is scanned whole; the model table is read by its time index",
    async (_, filter) => {
      const [hours, costs] = await logs.explainStats({ workspaceId, ...filter() }, range);
      for (const plan of [hours, costs]) expect(plan?.join("\n"), plan?.join("\n")).not.toMatch(/Seq Scan/);
      expect(costs?.join("\n"), costs?.join("\n")).toMatch(
        /(Index (Only )?Scan using|Bitmap Index Scan on) log_entry_models_by_time .*\n.*Index Cond: .*workspace_id = .*started_at >= .*started_at <= /,
      );
    },
  );
});

describe("a search's plan follows how many entries hold its words (D45)", () => {
  const heldBy = async (low: number, high: number) => {
    const { rows } = await pool.query<{ word: string }>(
      `SELECT word FROM ts_stat('SELECT words FROM log_search')
       WHERE word ~ '^[a-z]{3,}$' AND ndoc BETWEEN $1 AND $2 ORDER BY ndoc DESC, word LIMIT 1`,
      [low, high],
    );
    expect(rows[0], `a word held by ${low} to ${high} entries`).toBeDefined();
    return searchTermsOf(rows[0]?.word ?? "") as SearchTerm[];
  };
  const planOf = async (search: SearchTerm[]) =>
    (await logs.explainList({ workspaceId, search }, page("desc"))).join("\n");
  const page = (order: "asc" | "desc"): PageRequest => ({
    order,
    limit: 100,
    withCostDetail: false,
    withTraceSpans: false,
    withFinalOutput: false,
  });

  it("few matches drive the list: each entry read by id, then sorted", async () => {
    const plan = await planOf(await heldBy(1, 1_000));
    expect(plan).toMatch(/CTE Scan on search_matches[\s\S]*Index Scan using log_entries_pkey/);
    expect(plan).not.toMatch(/using log_entries_by_time/);
  });

  it("thousands of matches are hashed once, and the keyset index's keys checked against them, no row read", async () => {
    const plan = await planOf(await heldBy(2_500, 9_000));
    expect(plan).toMatch(/Index Only Scan Backward using log_entries_by_time/);
    expect(plan).toMatch(/hashed SubPlan/);
    expect(plan).not.toMatch(/log_search_pkey/);
  });
});
