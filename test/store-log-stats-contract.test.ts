import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/store/database.js";
import type { DayModelCostRecord, HourRange, LogStats, StatsFilter } from "../src/store/log-stats-sql.js";
import { LogsStore } from "../src/store/logs-store.js";
import { migrations } from "../src/store/migrations.js";
import { openPostgres } from "../src/store/postgres/database.js";
import { PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import {
  migrate as migratePostgres,
  migrations as postgresMigrations,
} from "../src/store/postgres/migrations.js";
import { namedStatement } from "../src/store/postgres/named-parameters.js";
import { type ExecutionRecord, type LogEntryRecord, levels, triggers } from "../src/store/records.js";
import type { StoreArea } from "../src/store/store.js";
import { testWorkflowState } from "./support/flowlog.js";
import { matches } from "./support/log-filter-oracle.js";
import { seededRandom } from "./support/random.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { type ContractDatabase, storeKinds } from "./support/store-kinds.js";

// Issue 17: GET /api/v1/log-stats reads the logs area's stats, which both stores (D32) must answer alike.
// Every answer is compared with an oracle computed here from the rows the test wrote, with the list's
// filter semantics (log-filter-oracle.ts) and the definitions written out plainly: one bucket per UTC
// hour of the range, nearest-rank percentiles, cost per UTC day and model summed exactly (D30).

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

type Logs = StoreArea<LogsStore>;

const kinds = storeKinds<Logs>(
  { sqlite: (db) => new LogsStore(db), postgres: (pool) => new PostgresLogsStore(pool) },
  () => server,
);

const hourMs = 3_600_000;
const dayMs = 86_400_000;
const workspaceId = "ws_stats";
const otherWorkspaceId = "ws_stats_other";
const t0 = Date.parse("2026-11-02T00:00:00.000Z");
const workflows = ["wf_a", "wf_b", "wf_c"];
const folders = ["fld_a", "fld_b", null];
// Byte order and language order disagree on these (case), and one name holds a dot.
const models = ["gpt-4o", "GPT-4o", "gpt-4.1-nano", "claude-sonnet-4"];

let serial = 0;

/** An execution of the workspace at `startedAt`, with the given parts, the rest plain. */
function record(
  startedAt: number,
  parts: {
    workspace?: string;
    workflow?: number;
    level?: LogEntryRecord["level"];
    trigger?: LogEntryRecord["trigger"];
    durationMs?: number;
    /** Model -> [cost in USD, tokens]. */
    models?: Record<string, [number, number]>;
  } = {},
): ExecutionRecord {
  const n = ++serial;
  const workflow = parts.workflow ?? 0;
  const used = Object.entries(parts.models ?? {});
  const modelCosts = Object.fromEntries(
    used.map(([model, [total, tokens]]) => [
      model,
      { input: 0, output: total, total, tokens: { prompt: tokens, completion: 0, total: tokens } },
    ]),
  );
  const total = used.reduce((sum, [, [cost]]) => Math.round((sum + cost) * 1e9) / 1e9, 0);
  const tokens = used.reduce((sum, [, [, t]]) => sum + t, 0);
  const durationMs = parts.durationMs ?? 1000;
  return {
    workflowState: testWorkflowState,
    entry: {
      id: `log_${String(n).padStart(6, "0")}`,
      workspaceId: parts.workspace ?? workspaceId,
      workflowId: workflows[workflow] as string,
      folderId: folders[workflow] ?? null,
      executionId: `ex_${n}`,
      billedUserId: null,
      level: parts.level ?? "info",
      trigger: parts.trigger ?? "api",
      startedAt,
      endedAt: startedAt + durationMs,
      totalDurationMs: durationMs,
      cost: { total, tokens: { prompt: tokens, completion: 0, total: tokens }, models: modelCosts },
      files: null,
      traceSpans: [],
      finalOutput: undefined,
    },
  };
}

/**
 * Three days of executions: hour by hour a random count (empty hours among them) and hours of exactly
 * 1, 2 and 20, where nearest rank and interpolation disagree; durations with ties; random levels,
 * triggers, workflows and models with nano-USD costs; and another workspace's executions in the same
 * hours, which must never count.
 */
function testRecords(): ExecutionRecord[] {
  const random = seededRandom(17);
  const fixedCounts = new Map([
    [5, 1],
    [6, 2],
    [7, 20],
  ]);
  const records: ExecutionRecord[] = [];
  for (let hour = 0; hour < 72; hour++) {
    const count = fixedCounts.get(hour) ?? (random.chance(0.2) ? 0 : random.int(1, 12));
    for (let i = 0; i < count; i++) {
      const used = random.subset(models);
      records.push(
        record(t0 + hour * hourMs + random.int(0, hourMs - 1), {
          workflow: random.int(0, 2),
          level: random.chance(0.25) ? "error" : random.pick(levels),
          trigger: random.pick(triggers),
          durationMs: random.int(0, 40) * 125,
          models: Object.fromEntries(
            used.map((model) => [model, [random.int(1, 5_000_000) / 1e9, random.int(0, 4000)]]),
          ),
        }),
      );
    }
    if (random.chance(0.5)) {
      records.push(record(t0 + hour * hourMs, { workspace: otherWorkspaceId, models: { "gpt-4o": [1, 1] } }));
    }
  }
  return records;
}

/** What the stats must be: the definitions, over the rows the list's filters keep. */
function expectedStats(records: ExecutionRecord[], filter: StatsFilter, range: HourRange): LogStats {
  const kept = records
    .map((r) => r.entry)
    .filter(
      (e) =>
        e.workspaceId === filter.workspaceId &&
        matches(e, { ...filter, startDate: range.start, endDate: range.end - 1 }),
    );
  const hours: LogStats["hours"] = [];
  for (let hour = range.start; hour < range.end; hour += hourMs) {
    const inHour = kept.filter((e) => e.startedAt >= hour && e.startedAt < hour + hourMs);
    const durations = inHour.map((e) => e.totalDurationMs).sort((a, b) => a - b);
    const errors = inHour.filter((e) => e.level === "error").length;
    hours.push(
      durations.length === 0
        ? { hour, executions: 0, errors: 0 }
        : {
            hour,
            executions: durations.length,
            errors,
            p50DurationMs: nearestRank(durations, 50),
            p95DurationMs: nearestRank(durations, 95),
          },
    );
  }
  const costs = new Map<string, DayModelCostRecord & { nanoUsd: number }>();
  for (const entry of kept) {
    const day = Math.floor(entry.startedAt / dayMs) * dayMs;
    for (const [model, cost] of Object.entries(entry.cost.models)) {
      const key = `${day} ${model}`;
      const sum = costs.get(key) ?? { day, model, cost: 0, tokens: 0, nanoUsd: 0 };
      sum.nanoUsd += Math.round(cost.total * 1e9);
      sum.tokens += cost.tokens.total;
      costs.set(key, sum);
    }
  }
  const modelCosts = [...costs.values()]
    .sort((a, b) => a.day - b.day || Buffer.compare(Buffer.from(a.model), Buffer.from(b.model)))
    .map(({ day, model, tokens, nanoUsd }) => ({ day, model, cost: nanoUsd / 1e9, tokens }));
  return { hours, modelCosts };
}

/** The smallest value with at least `percent` % of the values at or below it (nearest rank). */
function nearestRank(ascending: number[], percent: number): number | undefined {
  return ascending.find((_, index) => (index + 1) * 100 >= percent * ascending.length);
}

/** Filter sets of the list (D9), one of each kind and combinations. */
const filterSets: [string, Omit<StatsFilter, "workspaceId">][] = [
  ["no filter", {}],
  ["one workflow", { workflowIds: ["wf_a"] }],
  ["two workflows", { workflowIds: ["wf_a", "wf_c"] }],
  ["one folder", { folderIds: ["fld_b"] }],
  ["level=error", { level: "error" }],
  ["two triggers", { triggers: ["api", "schedule"] }],
  ["duration range", { minDurationMs: 1000, maxDurationMs: 3000 }],
  ["cost range", { minCost: 0.001, maxCost: 0.004 }],
  ["model", { model: "gpt-4.1-nano" }],
  ["model, level and workflow", { model: "GPT-4o", level: "info", workflowIds: ["wf_b"] }],
];

/** Ranges: the three days, one that starts mid-data and runs past it, and one before any data. */
const ranges: [string, HourRange][] = [
  ["the three days", { start: t0, end: t0 + 3 * dayMs }],
  ["a range past the data", { start: t0 + 30 * hourMs, end: t0 + 4 * dayMs }],
  ["a day before the data", { start: t0 - dayMs, end: t0 }],
];

describe.each(kinds)("the log stats on %s (issue 17, D32)", (_, open) => {
  let db: ContractDatabase<Logs>;
  let logs: Logs;
  let records: ExecutionRecord[];

  beforeAll(async () => {
    db = await open();
    logs = db.areas;
    records = testRecords();
    expect(await logs.insertExecutions(records)).toBe(records.length);
  });
  afterAll(() => db.close());

  it("the data has what the promises need: empty hours, hours of 1, 2 and 20, ties, errors", () => {
    const stats = expectedStats(records, { workspaceId }, ranges[0]?.[1] as HourRange);
    const counts = stats.hours.map((h) => h.executions);
    expect(counts.filter((n) => n === 0).length).toBeGreaterThan(5);
    expect(counts.slice(5, 8)).toEqual([1, 2, 20]);
    expect(stats.hours.some((h) => h.errors > 0)).toBe(true);
    expect(stats.modelCosts.map((c) => c.model)).toContain("GPT-4o");
  });

  it.each(ranges)(
    "%s: one bucket per hour, in order, empty hours as zeros without percentiles",
    async (_, range) => {
      const stats = await logs.stats({ workspaceId }, range);
      expect(stats.hours.map((h) => h.hour)).toEqual(
        Array.from({ length: (range.end - range.start) / hourMs }, (_, i) => range.start + i * hourMs),
      );
      for (const hour of stats.hours.filter((h) => h.executions === 0)) {
        expect(hour).toEqual({ hour: hour.hour, executions: 0, errors: 0 });
      }
      expect(stats).toEqual(expectedStats(records, { workspaceId }, range));
    },
  );

  it("nearest rank: an hour of 1 gives its value, of 2 the larger at p95, of 20 the 10th and 19th", async () => {
    const stats = await logs.stats({ workspaceId }, { start: t0 + 5 * hourMs, end: t0 + 8 * hourMs });
    const durations = (hour: number) =>
      records
        .map((r) => r.entry)
        .filter((e) => e.workspaceId === workspaceId && Math.floor((e.startedAt - t0) / hourMs) === hour)
        .map((e) => e.totalDurationMs)
        .sort((a, b) => a - b);
    const [one, two, twenty] = [durations(5), durations(6), durations(7)];
    expect(stats.hours.map((h) => [h.p50DurationMs, h.p95DurationMs])).toEqual([
      [one[0], one[0]],
      [two[0], two[1]],
      [twenty[9], twenty[18]],
    ]);
  });

  it.each(filterSets)("%s: the stats of exactly the entries the list would give", async (_, filter) => {
    for (const [name, range] of ranges) {
      const stats = await logs.stats({ workspaceId, ...filter }, range);
      expect(stats, name).toEqual(expectedStats(records, { workspaceId, ...filter }, range));
    }
  });

  it("a filter narrows the costs to its entries, with every model those entries used", async () => {
    const range = ranges[0]?.[1] as HourRange;
    const all = await logs.stats({ workspaceId }, range);
    const errors = await logs.stats({ workspaceId, level: "error" }, range);
    const sum = (stats: LogStats) => stats.modelCosts.reduce((n, c) => n + c.tokens, 0);
    expect(sum(errors)).toBeGreaterThan(0);
    expect(sum(errors)).toBeLessThan(sum(all));
    const withNano = await logs.stats({ workspaceId, model: "gpt-4.1-nano" }, range);
    expect(new Set(withNano.modelCosts.map((c) => c.model)).size).toBeGreaterThan(1);
  });

  it("counts an entry at the range's start and its last millisecond, never one at its end", async () => {
    const at = t0 + 10 * dayMs;
    const edge = [at, at + 2 * hourMs - 1, at + 2 * hourMs].map((startedAt) =>
      record(startedAt, { durationMs: 7, models: { "gpt-4o": [0.5, 10] } }),
    );
    await logs.insertExecutions(edge);
    // Unfiltered, and through a filter, which reads the range on both tables.
    for (const filter of [{}, { level: "info" as const }]) {
      const stats = await logs.stats({ workspaceId, ...filter }, { start: at, end: at + 2 * hourMs });
      expect(stats.hours.map((h) => h.executions)).toEqual([1, 1]);
      expect(stats.modelCosts).toEqual([{ day: at, model: "gpt-4o", cost: 1, tokens: 20 }]);
    }
  });

  it("sums costs exactly to 1e-9 (D30): 0.1 + 0.2 is 0.3, and nano-dollars are not lost", async () => {
    const at = t0 + 20 * dayMs;
    await logs.insertExecutions([
      record(at, { models: { "gpt-4o": [0.1, 1] } }),
      record(at + 1, { models: { "gpt-4o": [0.2, 1] } }),
      record(at + 2, { models: { "gpt-4o": [0.000000001, 1] } }),
    ]);
    const stats = await logs.stats({ workspaceId }, { start: at, end: at + hourMs });
    expect(stats.modelCosts).toEqual([{ day: at, model: "gpt-4o", cost: 0.300000001, tokens: 3 }]);
  });

  it("another workspace's stats count only its own executions", async () => {
    const range = ranges[0]?.[1] as HourRange;
    expect(await logs.stats({ workspaceId: otherWorkspaceId }, range)).toEqual(
      expectedStats(records, { workspaceId: otherWorkspaceId }, range),
    );
    const none = await logs.stats({ workspaceId: "ws_absent" }, range);
    expect(none.hours.every((h) => h.executions === 0)).toBe(true);
    expect(none.modelCosts).toEqual([]);
  });
});

/** Writes a statement with `@name` parameters, as both stores' tables take it. */
type Write = (sql: string, parameters: object) => Promise<void>;

/**
 * A store an older flowlog left, one schema version before the stats: `fill` writes its rows through
 * `write`, then the store is opened by this flowlog, which migrates it.
 */
const olderStores: [
  string,
  (fill: (write: Write) => Promise<void>) => Promise<[Logs, () => Promise<void>]>,
][] = [
  [
    "SQLite",
    async (fill) => {
      const file = path.join(mkdtempSync(path.join(tmpdir(), "flowlog-stats-upgrade-")), "flowlog.sqlite");
      const older = openDatabase(
        file,
        migrations.findIndex((sql) => sql.includes("cost_nano_usd")),
      );
      await fill(async (sql, parameters) => {
        older.prepare(sql).run(parameters);
      });
      older.close();
      const db = openDatabase(file);
      return [
        new LogsStore(db),
        async () => {
          db.close();
        },
      ];
    },
  ],
  [
    "PostgreSQL",
    async (fill) => {
      const url = await server.createDatabase();
      const older = new pg.Client({ connectionString: url });
      await older.connect();
      await migratePostgres(
        older,
        postgresMigrations.findIndex((sql) => typeof sql === "string" && sql.includes("cost_nano_usd")),
      );
      await fill(async (sql, parameters) => {
        await older.query(namedStatement(sql)(parameters));
      });
      await older.end();
      const pool = await openPostgres(url);
      return [new PostgresLogsStore(pool), () => pool.end()];
    },
  ],
];

describe.each(olderStores)("a %s store an older flowlog left (issue 17)", (_, openOlder) => {
  it("gets each model's cost and tokens from the entries' cost_json when it upgrades", async () => {
    const entries = [
      record(t0 + 1000, { models: { "gpt-4.1-nano": [0.1, 7], "GPT-4o": [0.000000001, 3] } }),
      record(t0 + 2000, { models: { "gpt-4.1-nano": [0.2, 5] } }),
      record(t0 + 3000, { models: {} }),
    ];
    const [logs, close] = await openOlder(async (write) => {
      for (const { entry } of entries) {
        await write(
          `INSERT INTO log_entries (id, workspace_id, workflow_id, execution_id, level, trigger, started_at,
             ended_at, total_duration_ms, cost_total, cost_json, trace_spans_json)
           VALUES (@id, @workspaceId, 'wf_a', @executionId, 'info', 'api', @startedAt, @startedAt, 1, @total,
             @costJson, '[]')`,
          {
            ...entry,
            total: entry.cost.total,
            costJson: JSON.stringify({ tokens: entry.cost.tokens, models: entry.cost.models }),
          },
        );
        for (const model of Object.keys(entry.cost.models)) {
          await write(
            `INSERT INTO log_entry_models (workspace_id, model, started_at, log_id)
             VALUES (@workspaceId, @model, @startedAt, @id)`,
            { ...entry, model },
          );
        }
      }
    });
    try {
      const stats = await logs.stats({ workspaceId }, { start: t0, end: t0 + hourMs });
      expect(stats.modelCosts).toEqual([
        { day: t0, model: "GPT-4o", cost: 0.000000001, tokens: 3 },
        { day: t0, model: "gpt-4.1-nano", cost: 0.3, tokens: 12 },
      ]);
      expect(stats.hours[0]).toMatchObject({ executions: 3, p50DurationMs: 1 });
    } finally {
      await close();
    }
  });
});
