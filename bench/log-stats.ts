import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase } from "../src/store/database.js";
import { type ExecutionRows, executionRows } from "../src/store/log-rows.js";
import type { HourRange, LogStats, StatsFilter } from "../src/store/log-stats-sql.js";
import { LogsStore } from "../src/store/logs-store.js";
import { openPostgres } from "../src/store/postgres/database.js";
import { PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import { generatedExecutions } from "../test/support/generated-executions.js";
import { benchPostgres } from "./support/postgres.js";
import { type Bench, type BenchOptions, ms, type Table } from "./support/report.js";
import { type SampleBudget, sampleAsync } from "./support/sample.js";

const workspaceId = "ws_bench";
const hourMs = 3_600_000;
const dayMs = 86_400_000;
/** Executions per insert, as `flowlog seed` writes them. */
const seedBatch = 5_000;
/** Each call reads up to a month of rows: a few samples tell its time. */
const budget: SampleBudget = { count: 5, maxMs: 20_000, minCount: 3, warmup: 1 };

/** What the bench needs of a store: a batch writer, the stats, and its disposal. */
interface StatsTarget {
  insertRows(rows: ExecutionRows[]): Promise<number>;
  stats(filter: StatsFilter, range: HourRange): Promise<LogStats>;
  /** Brings the statistics and visibility a settled table has (PostgreSQL's VACUUM ANALYZE). */
  settle(): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * GET /api/v1/log-stats measured in-process at each store (issue 17): the seeder's executions spread over
 * 30 days (1M; 2,000 with --quick), then `stats` for a 31-day range, which holds every row, and for the
 * last 24 hours, the default, under each filter kind.
 */
export const logStatsBench: Bench = {
  name: "log-stats",
  async run(options: BenchOptions) {
    const size = options.quick ? 2_000 : 1_000_000;
    const server = await benchPostgres(options);
    try {
      return [
        await measure("SQLite", size, openSqliteTarget()),
        await measure("PostgreSQL", size, await openPostgresTarget(await server.createDatabase())),
      ];
    } finally {
      await server.stop();
    }
  },
};

function openSqliteTarget(): StatsTarget {
  const dir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-stats-"));
  const db = openDatabase(path.join(dir, "flowlog.sqlite"));
  const logs = new LogsStore(db);
  return {
    insertRows: (rows) => logs.insertRows(rows),
    stats: (filter, range) => logs.stats(filter, range),
    settle: async () => undefined,
    dispose: async () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function openPostgresTarget(url: string): Promise<StatsTarget> {
  const pool = await openPostgres(url);
  const logs = new PostgresLogsStore(pool);
  return {
    insertRows: (rows) => logs.insertRows(rows),
    stats: (filter, range) => logs.stats(filter, range),
    settle: async () => {
      await pool.query("VACUUM ANALYZE");
    },
    dispose: () => pool.end(),
  };
}

async function measure(store: string, size: number, target: StatsTarget): Promise<Table> {
  try {
    const now = Date.now();
    const seeding = performance.now();
    let batch: ExecutionRows[] = [];
    for await (const record of generatedExecutions({ workspaceId, count: size, seed: "bench", now })) {
      batch.push(executionRows(record));
      if (batch.length === seedBatch) {
        await target.insertRows(batch);
        batch = [];
      }
    }
    await target.insertRows(batch);
    await target.settle();
    process.stderr.write(
      `  ${store}: seeded ${size} log entries in ${((performance.now() - seeding) / 1000).toFixed(1)} s\n`,
    );
    const end = Math.ceil(now / hourMs) * hourMs;
    const ranges: [string, HourRange][] = [
      ["31 days", { start: end - 31 * dayMs, end }],
      ["24 hours", { start: end - dayMs, end }],
    ];
    const rows: (string | number)[][] = [];
    for (const [rangeName, range] of ranges) {
      for (const [filterName, filter] of Object.entries(filterSets())) {
        const query = { workspaceId, ...filter };
        const counted = (await target.stats(query, range)).hours.reduce((n, h) => n + h.executions, 0);
        const timing = await sampleAsync(() => target.stats(query, range), budget);
        rows.push([rangeName, filterName, counted.toLocaleString("en-US"), ms(timing.p50), ms(timing.max)]);
      }
    }
    return {
      title: `log-stats on ${store}: ${size.toLocaleString("en-US")} log entries over 30 days (ms)`,
      columns: ["range", "filter", "executions counted", "p50", "max"],
      rows,
      note: "One call: the hours statement and the cost-by-model statement, in one read snapshot.",
    };
  } finally {
    await target.dispose();
  }
}

/** The filter kinds of the list (D9), with values the seeder's data has. */
function filterSets(): Record<string, Omit<StatsFilter, "workspaceId">> {
  return {
    none: {},
    "level=error": { level: "error" },
    "trigger=api": { triggers: ["api"] },
    "cost range": { minCost: 0.001, maxCost: 1 },
    "model=gpt-4o-mini": { model: "gpt-4o-mini" },
  };
}
