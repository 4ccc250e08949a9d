import { createHash, type Hash } from "node:crypto";
import type { Db } from "../database.js";
import { type PostgresPool, type Queryable, withTransaction } from "./database.js";
import { indexEntriesWithoutWords } from "./search-index.js";

/**
 * `flowlog migrate-data` (issue 15): copies a SQLite store into a PostgreSQL one, table by table. The
 * PostgreSQL schema mirrors SQLite's column for column (migrations.ts), so a row goes across as it is.
 *
 * - In foreign-key order, a batch at a time in primary-key order; each batch and the key it ended on are
 *   committed together in `flowlog_data_copy`, so a copy that stops (killed, connection lost) resumes
 *   after its last committed batch and never writes a row twice.
 * - Rows are added with ON CONFLICT DO NOTHING, except the tables the target's own triggers write while
 *   rows arrive (usage_periods, from each log entry; auth_revision, from each membership): theirs are
 *   taken from the source, which is the record.
 * - Verified by the row count and a SHA-256 of each table read in key order on both sides.
 *
 * The source must not change during the copy: stop every flowlog process that uses it first.
 */

/** A table to copy: its primary key, and whether the source's rows replace what the target holds. */
interface CopiedTable {
  name: string;
  key: readonly string[];
  sourceWins?: boolean;
}

/** Parents before children, so every foreign key finds its row; the trigger-kept tables last. */
export const copiedTables: readonly CopiedTable[] = [
  { name: "users", key: ["id"] },
  { name: "workspaces", key: ["id"] },
  { name: "memberships", key: ["user_id", "workspace_id"] },
  { name: "api_keys", key: ["id"] },
  { name: "folders", key: ["id"] },
  { name: "workflows", key: ["id"] },
  { name: "workflow_versions", key: ["workflow_id", "version"] },
  { name: "environment_variables", key: ["workspace_id", "name"] },
  { name: "webhook_triggers", key: ["workflow_id"] },
  { name: "workflow_schedules", key: ["id"] },
  { name: "log_entries", key: ["id"] },
  { name: "log_entry_models", key: ["workspace_id", "model", "started_at", "log_id"] },
  { name: "workflow_states", key: ["hash"] },
  { name: "execution_states", key: ["execution_id"] },
  { name: "execution_retries", key: ["execution_id"] },
  { name: "rate_limit_buckets", key: ["key"] },
  { name: "notification_subscriptions", key: ["id"] },
  { name: "deliveries", key: ["id"] },
  { name: "delivery_attempts", key: ["delivery_id", "series", "attempt"] },
  { name: "alert_state", key: ["subscription_id", "workflow_id"] },
  { name: "notification_outbox", key: ["log_id"] },
  { name: "archives", key: ["workspace_id", "day"] },
  { name: "usage_periods", key: ["user_id", "period_start"], sourceWins: true },
  { name: "auth_revision", key: ["id"], sourceWins: true },
];

type Value = string | number | Buffer | null;
type Row = Record<string, Value>;

export interface CopyOptions {
  /** Rows per batch: what one transaction writes and one read holds in memory. */
  batchRows?: number;
  /** Called after each committed batch. */
  onProgress?: (table: string, copied: number, total: number) => void;
  /** Stops between batches; the copy resumes there next time. */
  signal?: AbortSignal;
}

/** One table after the copy: its rows and checksum on either side, and whether they agree. */
export interface TableCheck {
  table: string;
  sourceRows: number;
  targetRows: number;
  sourceChecksum: string;
  targetChecksum: string;
  matches: boolean;
}

/** What stops a copy before it writes: a target that holds data of its own, or schemas that differ. */
export class DataCopyError extends Error {
  override name = "DataCopyError";
}

const progressTable = `CREATE TABLE IF NOT EXISTS flowlog_data_copy (
  table_name text PRIMARY KEY,
  last_key text,
  copied bigint NOT NULL,
  done boolean NOT NULL DEFAULT false
)`;

/** Copies every table not yet done, resuming each after its last committed batch. */
export async function copySqliteToPostgres(
  source: Db,
  target: PostgresPool,
  options: CopyOptions = {},
): Promise<void> {
  await target.query(progressTable);
  await refuseForeignData(target);
  for (const table of copiedTables) {
    const columns = await sharedColumns(source, target, table.name);
    // A statement takes at most 65,535 parameters, one per value.
    const batchRows = Math.min(options.batchRows ?? 500, Math.floor(65_535 / columns.length));
    const progress = await progressOf(target, table.name);
    if (progress.done) continue;
    const total = source.prepare(`SELECT count(*) FROM ${table.name}`).pluck().get() as number;
    let after = progress.lastKey;
    let copied = progress.copied;
    while (!options.signal?.aborted) {
      const rows = readBatch(source, table, columns, after, batchRows);
      const last = rows.at(-1);
      const done = rows.length < batchRows;
      const lastKey = last ? table.key.map((column) => last[column] ?? null) : after;
      copied += rows.length;
      await withTransaction(target, async (client) => {
        if (rows.length > 0) await insertBatch(client, table, columns, rows, after);
        await client.query(
          `INSERT INTO flowlog_data_copy (table_name, last_key, copied, done) VALUES ($1, $2, $3, $4)
           ON CONFLICT (table_name) DO UPDATE
           SET last_key = excluded.last_key, copied = excluded.copied, done = excluded.done`,
          [table.name, lastKey && encodeKey(lastKey), copied, done],
        );
      });
      options.onProgress?.(table.name, copied, total);
      if (done) break;
      after = lastKey;
    }
    if (options.signal?.aborted) return;
  }
  // D45: SQLite's index is an FTS5 table, not rows to copy; the copied entries are indexed here.
  await indexEntriesWithoutWords(target);
}

/** Counts and checksums every copied table on both sides, in key order. */
export async function verifyCopy(source: Db, target: PostgresPool): Promise<TableCheck[]> {
  const checks: TableCheck[] = [];
  for (const table of copiedTables) {
    const columns = await sharedColumns(source, target, table.name);
    const sourceSide = tableDigest();
    let after: Value[] | undefined;
    for (;;) {
      const rows = readBatch(source, table, columns, after, 2000);
      for (const row of rows) sourceSide.add(row, columns);
      const last = rows.at(-1);
      if (!last || rows.length < 2000) break;
      after = table.key.map((column) => last[column] ?? null);
    }
    const targetSide = tableDigest();
    after = undefined;
    for (;;) {
      const rows = await readTargetBatch(target, table, columns, after, 2000);
      for (const row of rows) targetSide.add(row, columns);
      const last = rows.at(-1);
      if (!last || rows.length < 2000) break;
      after = table.key.map((column) => last[column] ?? null);
    }
    const [s, t] = [sourceSide.result(), targetSide.result()];
    checks.push({
      table: table.name,
      sourceRows: s.rows,
      targetRows: t.rows,
      sourceChecksum: s.checksum,
      targetChecksum: t.checksum,
      matches: s.rows === t.rows && s.checksum === t.checksum,
    });
  }
  return checks;
}

/**
 * A fresh flowlog database holds only auth_revision's one row; one that a copy started holds its
 * progress. Anything else is data a copy would mix with, so the copy refuses to start.
 */
async function refuseForeignData(target: PostgresPool): Promise<void> {
  const started = await target.query("SELECT 1 FROM flowlog_data_copy LIMIT 1");
  if (started.rowCount) return;
  for (const table of copiedTables) {
    if (table.name === "auth_revision") continue;
    const found = await target.query(`SELECT 1 FROM ${table.name} LIMIT 1`);
    if (found.rowCount) {
      throw new DataCopyError(
        `the target database already holds data (table ${table.name}); copy into a new, empty database`,
      );
    }
  }
}

/** The table's columns, which both schemas must have alike (a copy between different versions would lose some). */
async function sharedColumns(source: Db, target: PostgresPool, table: string): Promise<string[]> {
  const sourceColumns = (
    source.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[]
  )
    .slice()
    .sort();
  const { rows } = await target.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = $1 ORDER BY column_name COLLATE "C"`,
    [table],
  );
  const targetColumns = rows.map((row) => row.name);
  if (sourceColumns.join() !== targetColumns.join()) {
    throw new DataCopyError(
      `table ${table} differs between the stores (SQLite: ${sourceColumns.join(", ") || "missing"}; ` +
        `PostgreSQL: ${targetColumns.join(", ") || "missing"}): run both at the same flowlog version`,
    );
  }
  return sourceColumns;
}

async function progressOf(
  target: PostgresPool,
  table: string,
): Promise<{ lastKey: Value[] | undefined; copied: number; done: boolean }> {
  const { rows } = await target.query<{ last_key: string | null; copied: number; done: boolean }>(
    "SELECT last_key, copied, done FROM flowlog_data_copy WHERE table_name = $1",
    [table],
  );
  const row = rows[0];
  if (!row) return { lastKey: undefined, copied: 0, done: false };
  return {
    lastKey: row.last_key === null ? undefined : decodeKey(row.last_key),
    copied: row.copied,
    done: row.done,
  };
}

/** The batch after `after` in primary-key order; SQLite compares text and blobs by their bytes, as "C" does. */
function readBatch(
  source: Db,
  table: CopiedTable,
  columns: readonly string[],
  after: readonly Value[] | undefined,
  limit: number,
): Row[] {
  const key = table.key.join(", ");
  const where = after ? `WHERE (${key}) > (${table.key.map(() => "?").join(", ")})` : "";
  const sql = `SELECT ${columns.join(", ")} FROM ${table.name} ${where} ORDER BY ${key} LIMIT ?`;
  return source.prepare(sql).all(...(after ?? []), limit) as Row[];
}

async function readTargetBatch(
  target: PostgresPool,
  table: CopiedTable,
  columns: readonly string[],
  after: readonly Value[] | undefined,
  limit: number,
): Promise<Row[]> {
  const key = table.key.join(", ");
  const params = [...(after ?? []), limit];
  const where = after ? `WHERE (${key}) > (${table.key.map((_, i) => `$${i + 1}`).join(", ")})` : "";
  const sql = `SELECT ${columns.join(", ")} FROM ${table.name} ${where} ORDER BY ${key} LIMIT $${params.length}`;
  return (await target.query<Row>(sql, params)).rows;
}

async function insertBatch(
  client: Queryable,
  table: CopiedTable,
  columns: readonly string[],
  rows: readonly Row[],
  after: readonly Value[] | undefined,
): Promise<void> {
  const params: Value[] = [];
  const tuples = rows.map((row) => {
    const placeholders = columns.map((column) => {
      params.push(row[column] ?? null);
      return `$${params.length}`;
    });
    return `(${placeholders.join(", ")})`;
  });
  const others = columns.filter((column) => !table.key.includes(column));
  const onConflict = table.sourceWins
    ? `DO UPDATE SET ${others.map((column) => `${column} = excluded.${column}`).join(", ")}`
    : "DO NOTHING";
  try {
    await client.query(
      `INSERT INTO ${table.name} (${columns.join(", ")}) VALUES ${tuples.join(", ")}
       ON CONFLICT (${table.key.join(", ")}) ${onConflict}`,
      params,
    );
  } catch (error) {
    // A value PostgreSQL refuses (text with a NUL byte, which SQLite keeps) names where the copy stopped.
    const where = after ? `after key ${encodeKey(after)}` : "from its first row";
    const problem = error instanceof Error ? error.message : String(error);
    throw new DataCopyError(`table ${table.name}, the ${rows.length} rows ${where}: ${problem}`);
  }
}

/**
 * A running SHA-256 over a table's rows: each value tagged with its kind and, for text and bytes, its
 * length, so no two different rows hash alike. Numbers are written as JavaScript prints them, which is
 * what both drivers give for an integer or a float of the same value.
 */
function tableDigest(): {
  add(row: Row, columns: readonly string[]): void;
  result(): { rows: number; checksum: string };
} {
  const hash: Hash = createHash("sha256");
  let rows = 0;
  return {
    add(row, columns) {
      rows++;
      for (const column of columns) {
        const value = row[column] ?? null;
        if (value === null) hash.update("n;");
        else if (Buffer.isBuffer(value)) hash.update(`b${value.length}:`).update(value);
        else if (typeof value === "string") hash.update(`s${Buffer.byteLength(value)}:`).update(value);
        else hash.update(`d${String(value)};`);
      }
    },
    result: () => ({ rows, checksum: hash.digest("hex") }),
  };
}

/** A key in the progress table: JSON, with bytes (a state's hash) as base64. */
function encodeKey(key: readonly Value[]): string {
  return JSON.stringify(
    key.map((value) => (Buffer.isBuffer(value) ? { bytes: value.toString("base64") } : value)),
  );
}

function decodeKey(text: string): Value[] {
  return (JSON.parse(text) as (Value | { bytes: string })[]).map((value) =>
    value !== null && typeof value === "object" && "bytes" in value
      ? Buffer.from(value.bytes, "base64")
      : value,
  );
}
