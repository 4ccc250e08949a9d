import type { LogFilter } from "../src/store/log-list-sql.js";
import { type ExecutionRows, executionRows } from "../src/store/log-rows.js";
import { openPostgres, type PostgresPool } from "../src/store/postgres/database.js";
import { listQuery, PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import { generatedExecutions } from "../test/support/generated-executions.js";
import type { PostgresServer } from "../test/support/postgres.js";
import {
  commonFilters,
  type FilterValues,
  type ListTarget,
  listQueryTable,
  measure,
  type Plan,
  page,
  planOf,
  seededTitle,
} from "./list-query.js";
import { benchPostgres } from "./support/postgres.js";
import type { Bench, BenchOptions, Table } from "./support/report.js";

export const workspaceId = "ws_bench";
/** Executions per insert, as `flowlog seed` writes them. */
const seedBatch = 5_000;

/**
 * The list-query bench on PostgreSQL (issue 15: a 100-row page's p99 under 10 ms at 1M rows for every
 * filter set, the deep page at most 1.5x the first): the same filter sets, cursor walk and OFFSET
 * baseline, in-process through PostgresLogsStore on a throwaway server on this machine (loopback TCP).
 * Quick mode measures the SQLite bench's largest quick store only.
 */
export const listQueryPgBench: Bench = {
  name: "list-query-pg",
  async run(options: BenchOptions) {
    const plan = planOf(options);
    const sizes = options.quick && !options.sizes ? plan.sizes.slice(-1) : plan.sizes;
    const server = await benchPostgres(options);
    try {
      const tables: Table[] = [];
      for (const size of sizes) tables.push(await measureDatabase(server, size, plan));
      return tables;
    } finally {
      await server.stop();
    }
  },
};

async function measureDatabase(server: PostgresServer, size: number, plan: Plan): Promise<Table> {
  const pool = await openPostgres(await server.createDatabase());
  try {
    const logs = new PostgresLogsStore(pool);
    const now = Date.now();
    const seeding = performance.now();
    await seed(logs, size, now);
    // As autovacuum leaves a table that has settled: statistics for the planner, and the visibility map
    // that lets the model filter read its index alone.
    await pool.query("VACUUM ANALYZE");
    const seedMs = performance.now() - seeding;
    process.stderr.write(`  seeded ${size} log entries in ${(seedMs / 1000).toFixed(1)} s\n`);
    const target: ListTarget = {
      list: (filter, request) => logs.list(filter, request),
      offsetPage: (filter, offset) => offsetQuery(pool, filter, offset),
    };
    const filters = commonFilters(await filterValues(pool), workspaceId, now);
    const title = seededTitle("list-query on PostgreSQL", size, seedMs, await logTablesBytes(pool));
    return listQueryTable(title, await measure(target, filters, plan));
  } finally {
    await pool.end();
  }
}

/**
 * The seeder's executions, serialised as they come and written a batch per statement set. One batch is
 * written while the next is generated: the server inserts while this process simulates runs, the larger
 * share of the seeding's time (issue 52, 10M entries).
 */
export async function seed(logs: PostgresLogsStore, size: number, now: number, days = 30): Promise<void> {
  let batch: ExecutionRows[] = [];
  let writing: Promise<unknown> = Promise.resolve();
  for await (const record of generatedExecutions({ workspaceId, count: size, seed: "bench", now, days })) {
    batch.push(executionRows(record));
    if (batch.length === seedBatch) {
      await writing;
      writing = logs.insertRows(batch);
      batch = [];
    }
  }
  await writing;
  await logs.insertRows(batch);
}

/**
 * What the log tables take on disk, indexes and TOAST included: the storage the entries cost. A
 * partitioned table (partitions-pg) counts as its partitions.
 */
export async function logTablesBytes(pool: PostgresPool): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>(
    `SELECT sum(pg_total_relation_size(r)) AS bytes
     FROM unnest(ARRAY['log_entries', 'log_entry_models', 'execution_states', 'workflow_states']::regclass[]) AS t,
       LATERAL (SELECT t AS r UNION SELECT relid FROM pg_partition_tree(t)) AS parts`,
  );
  return Number(rows[0]?.bytes ?? 0);
}

export async function filterValues(pool: PostgresPool): Promise<FilterValues> {
  const one = async <T>(sql: string) => (await pool.query(sql, [workspaceId])).rows[0] as T;
  const { workflowId } = await one<{ workflowId: string }>(
    `SELECT workflow_id AS "workflowId" FROM log_entries WHERE workspace_id = $1
     GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
  );
  const { model } = await one<{ model: string }>(
    "SELECT model FROM log_entry_models WHERE workspace_id = $1 GROUP BY 1 ORDER BY count(*) DESC LIMIT 1",
  );
  const { costRange } = await one<{ costRange: [number, number] }>(
    `SELECT percentile_disc(ARRAY[0.25, 0.75]) WITHIN GROUP (ORDER BY cost_total) AS "costRange"
     FROM log_entries WHERE workspace_id = $1`,
  );
  return { workflowId, model, costRange };
}

/** The store's own list SQL for the first page, with OFFSET in place of the keyset condition. */
export function offsetQuery(pool: PostgresPool, filter: LogFilter, offset: number) {
  const { text, values } = listQuery(filter, page);
  const query = { text: `${text} OFFSET $${values.length + 1}`, values: [...values, offset] };
  return {
    run: () => pool.query(query),
    firstId: async () => (await pool.query<{ id: string }>(query)).rows[0]?.id,
  };
}
