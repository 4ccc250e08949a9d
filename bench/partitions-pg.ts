import pg from "pg";
import { deleteInBatches } from "../src/store/log-deletion.js";
import { openPostgres, type PostgresPool } from "../src/store/postgres/database.js";
import { PostgresLogDeletionStore } from "../src/store/postgres/log-deletion-store.js";
import { PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import type { PostgresServer } from "../test/support/postgres.js";
import { commonFilters, type ListTarget, listQueryTable, measure, type Plan, plans } from "./list-query.js";
import { filterValues, logTablesBytes, offsetQuery, seed, workspaceId } from "./list-query-pg.js";
import { benchPostgres } from "./support/postgres.js";
import { type Bench, type BenchOptions, ms, perSecond, ratio, type Table } from "./support/report.js";

/** Entries over the last 90 days: four calendar months, the oldest and newest in part. */
const sizes = { quick: 6_000, full: 3_000_000 };
const days = 90;
/** The schema holding the partitioned copy; a pool whose search_path starts with it reads the copy. */
const schema = "partitioned";

/**
 * Issue 52's experiment, not a change of the schema: would monthly range partitions of the log tables
 * (plain declarative partitioning on started_at) make D41's purge or the list cheaper on PostgreSQL? One
 * database holds the migrated schema and, in a schema of its own, a partitioned copy of the log tables
 * with the same rows and indexes. The store's own code reads and deletes either, told which by its
 * connections' search_path. Timed: the store's list under every filter set on both, and the oldest
 * month's purge three ways, each on a copy of the database: the store's batched deletion on the plain
 * tables, the same on the partitioned ones, and the month's partitions detached and dropped.
 */
export const partitionsPgBench: Bench = {
  name: "partitions-pg",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const server = await benchPostgres(options);
    try {
      const tables: Table[] = [];
      for (const size of options.sizes ?? [options.quick ? sizes.quick : sizes.full]) {
        tables.push(...(await measureSize(server, size, plan)));
      }
      return tables;
    } finally {
      await server.stop();
    }
  },
};

/** One size's tables, on a database dropped afterwards: a full run's outlasts no size. */
async function measureSize(server: PostgresServer, size: number, plan: Plan): Promise<Table[]> {
  const url = await server.createDatabase();
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  try {
    const month = await seedBothLayouts(url, size);
    return [
      await listTable(url, "plain tables", size, plan),
      await listTable(partitionedUrl(url), "monthly partitions", size, plan),
      await purgeTable(admin, url, month),
    ];
  } finally {
    await admin.query(`DROP DATABASE ${new URL(url).pathname.slice(1)}`);
    await admin.end();
  }
}

/** The same database with `schema` first on the search_path: the store's statements meet the copy. */
function partitionedUrl(url: string): string {
  const withPath = new URL(url);
  withPath.searchParams.set("options", `-c search_path=${schema},public`);
  return withPath.toString();
}

/** A month's partition's range, in Unix ms as started_at holds it. */
interface Month {
  from: number;
  to: number;
  /** The partitions' suffix, yyyy_mm. */
  suffix: string;
}

/** Seeds the migrated tables, copies them into `schema` partitioned by month; answers the oldest month. */
async function seedBothLayouts(url: string, size: number): Promise<Month> {
  const pool = await openPostgres(url);
  try {
    await seed(new PostgresLogsStore(pool), size, Date.now(), days);
    const { rows } = await pool.query<{ first: number; last: number }>(
      "SELECT min(started_at) AS first, max(started_at) AS last FROM log_entries",
    );
    const months = monthsBetween(rows[0]?.first ?? 0, rows[0]?.last ?? 0);
    await pool.query(await partitionedSchemaSql(pool, months));
    await pool.query("VACUUM ANALYZE");
    const oldest = months[0];
    if (!oldest) throw new Error("no entries seeded");
    return oldest;
  } finally {
    await pool.end();
  }
}

function monthsBetween(first: number, last: number): Month[] {
  const months: Month[] = [];
  const start = new Date(first);
  for (let year = start.getUTCFullYear(), month = start.getUTCMonth(); ; month++) {
    const from = Date.UTC(year, month, 1);
    if (from > last) return months;
    const date = new Date(from);
    const suffix = `${date.getUTCFullYear()}_${String(date.getUTCMonth() + 1).padStart(2, "0")}`;
    months.push({ from, to: Date.UTC(year, month + 1, 1), suffix });
  }
}

/**
 * The log tables again in `schema`: entries and models partitioned by month on started_at, the states
 * they point at as plain tables beside them, every index the migrations made on each. A partitioned
 * table's unique keys must hold the partition key, so the entries' id and execution id are unique only
 * with started_at: the cost of partitioning that the schema would carry (D17's idempotent write checks
 * the execution id alone).
 */
async function partitionedSchemaSql(pool: PostgresPool, months: Month[]): Promise<string> {
  const { rows: indexes } = await pool.query<{ table: string; definition: string; unique: boolean }>(
    `SELECT t.relname AS table, pg_get_indexdef(x.indexrelid) AS definition, x.indisunique AS unique
     FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid
     WHERE x.indrelid IN ('public.log_entries'::regclass, 'public.log_entry_models'::regclass)`,
  );
  const sameIndex = ({ table, definition, unique }: (typeof indexes)[number]) =>
    table === "log_entries" && unique
      ? []
      : [`${definition.replace(` ON public.${table} `, ` ON ${schema}.${table} `)};`];
  const partitions = (table: string) =>
    months.map(
      (m) =>
        `CREATE TABLE ${schema}.${table}_${m.suffix} PARTITION OF ${schema}.${table} ` +
        `FOR VALUES FROM (${m.from}) TO (${m.to});`,
    );
  return [
    `CREATE SCHEMA ${schema};`,
    ...["log_entries", "log_entry_models"].map(
      (table) =>
        `CREATE TABLE ${schema}.${table} (LIKE public.${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) ` +
        "PARTITION BY RANGE (started_at);",
    ),
    `ALTER TABLE ${schema}.log_entries ADD PRIMARY KEY (id, started_at),
       ADD UNIQUE (execution_id, started_at);`,
    ...indexes.flatMap(sameIndex),
    ...partitions("log_entries"),
    ...partitions("log_entry_models"),
    `CREATE TABLE ${schema}.workflow_states (LIKE public.workflow_states INCLUDING ALL);`,
    `CREATE TABLE ${schema}.execution_states (LIKE public.execution_states INCLUDING ALL,
       FOREIGN KEY (state_hash) REFERENCES ${schema}.workflow_states (hash));`,
    ...["log_entries", "log_entry_models", "workflow_states", "execution_states"].map(
      (table) => `INSERT INTO ${schema}.${table} SELECT * FROM public.${table};`,
    ),
  ].join("\n");
}

async function listTable(url: string, layout: string, size: number, plan: Plan): Promise<Table> {
  const pool = await openPostgres(url, { migrate: false });
  try {
    const logs = new PostgresLogsStore(pool);
    const target: ListTarget = {
      list: (filter, request) => logs.list(filter, request),
      offsetPage: (filter, offset) => offsetQuery(pool, filter, offset),
    };
    const filters = commonFilters(await filterValues(pool), workspaceId, Date.now());
    const perEntry = Math.round((await logTablesBytes(pool)) / size).toLocaleString("en-US");
    const title = `partitions-pg, ${layout}: ${size.toLocaleString("en-US")} entries (${perEntry} B each)`;
    return listQueryTable(title, await measure(target, filters, plan));
  } finally {
    await pool.end();
  }
}

/** The oldest month purged three ways, each on a copy of the database made from it as a template. */
async function purgeTable(admin: pg.Client, url: string, month: Month): Promise<Table> {
  const source = new URL(url).pathname.slice(1);
  const onCopy = async (name: string, purge: (copyUrl: string) => Promise<number>) => {
    const copy = `${source}_${name}`;
    await admin.query(`CREATE DATABASE ${copy} TEMPLATE ${source}`);
    const copyUrl = new URL(url);
    copyUrl.pathname = `/${copy}`;
    try {
      const started = performance.now();
      const entries = await purge(copyUrl.toString());
      return { entries, seconds: (performance.now() - started) / 1000 };
    } finally {
      await admin.query(`DROP DATABASE ${copy}`);
    }
  };
  const batched = (copyUrl: string) => batchedPurge(copyUrl, month);
  const runs = {
    "plain tables, batched": await onCopy("plain", batched),
    "partitions, batched": await onCopy("batched", (copyUrl) => batched(partitionedUrl(copyUrl))),
    "partitions, detached and dropped": await onCopy("dropped", (copyUrl) => droppedMonth(copyUrl, month)),
  };
  const baseline = runs["plain tables, batched"];
  for (const [name, run] of Object.entries(runs)) {
    if (run.entries !== baseline.entries) throw new Error(`${name}: ${run.entries} of ${baseline.entries}`);
  }
  return {
    title: `partitions-pg: the oldest month's purge (${baseline.entries.toLocaleString("en-US")} entries)`,
    columns: ["how", "seconds", "entries/s", "vs plain batched"],
    rows: Object.entries(runs).map(([name, run]) => [
      name,
      ms(run.seconds),
      perSecond(run.entries / run.seconds),
      ratio(baseline.seconds / run.seconds),
    ]),
    note:
      "Batched: deleteInBatches over the store's PostgresLogDeletionStore, what D41's purge runs, in " +
      "transactions of 200. Dropped: the month's execution states deleted in one statement, then its " +
      "two partitions detached and dropped.",
  };
}

async function batchedPurge(url: string, month: Month): Promise<number> {
  const pool = await openPostgres(url, { migrate: false });
  try {
    const filter = { workspaceId, startedFrom: month.from, startedTo: month.to - 1 };
    return (await deleteInBatches(new PostgresLogDeletionStore(pool), filter)).deleted.entries;
  } finally {
    await pool.end();
  }
}

/**
 * A month's purge as partitions allow it: what hangs off the month's entries outside their partitions
 * first (the execution states; a state no execution uses any more is left, as a purge may leave it for
 * the next), then the partitions, each detached concurrently (readers and writers of the other months go on) and
 * dropped.
 */
async function droppedMonth(url: string, month: Month): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const entries = `${schema}.log_entries_${month.suffix}`;
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${entries}`);
    await client.query(
      `DELETE FROM ${schema}.execution_states e USING ${entries} l WHERE e.execution_id = l.execution_id`,
    );
    for (const table of ["log_entries", "log_entry_models"]) {
      const partition = `${schema}.${table}_${month.suffix}`;
      await client.query(`ALTER TABLE ${schema}.${table} DETACH PARTITION ${partition} CONCURRENTLY`);
      await client.query(`DROP TABLE ${partition}`);
    }
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}
