import { openPostgres, type PostgresPool, withTransaction } from "../src/store/postgres/database.js";
import { PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import type { ExecutionRecord } from "../src/store/records.js";
import { sha256 } from "../src/util/sha256.js";
import type { PostgresServer } from "../test/support/postgres.js";
import {
  columns,
  compareModes,
  counts,
  generate,
  rawEntryValues,
  rawEntryWords,
  type Writer,
} from "./ingest.js";
import { benchPostgres } from "./support/postgres.js";
import type { Bench, BenchOptions } from "./support/report.js";

/**
 * The ingest bench on PostgreSQL (issue 15: the store at 0.8x raw or better): the same executions
 * through PostgresLogsStore, one per transaction and a thousand per transaction, against raw batched
 * INSERTs (multi-row VALUES, no COPY) of the same rows through the same driver, each side on a fresh
 * database of a throwaway server with PostgreSQL's own durability settings (fsync on each commit).
 */
export const ingestPgBench: Bench = {
  name: "ingest-pg",
  async run(options: BenchOptions) {
    const count = options.quick ? counts.quick : counts.full;
    const records = await generate(Math.max(count.single, count.batched));
    const server = await benchPostgres(options);
    try {
      return [
        {
          title: "ingest on PostgreSQL: executions written per second (log entry + snapshot + trace spans)",
          columns,
          rows: await compareModes(records, count, { store: storeWriter(server), raw: rawWriter(server) }),
          note: "raw: multi-row INSERT ... VALUES into log_entries, log_entry_models, execution_states, log_search (the entry's words and its level and trigger, as the store indexes them) and (once per distinct state) workflow_states, one transaction per batch.",
        },
      ];
    } finally {
      await server.stop();
    }
  },
};

const storeWriter =
  (server: PostgresServer): Writer =>
  async () => {
    const pool = await openPostgres(await server.createDatabase());
    const logs = new PostgresLogsStore(pool);
    return {
      write: (batch) =>
        batch.length === 1 && batch[0] ? logs.insertExecution(batch[0]) : logs.insertExecutions(batch),
      dispose: () => pool.end(),
    };
  };

const rawWriter =
  (server: PostgresServer): Writer =>
  async () => {
    const pool = await openPostgres(await server.createDatabase());
    const insert = rawInserts();
    return {
      write: (batch) => insert(pool, batch),
      dispose: () => pool.end(),
    };
  };

/**
 * The baseline: the rows PostgresLogsStore writes for a batch, one multi-row INSERT per table in one
 * transaction, without the store's idempotency check (D17) or its single statement.
 */
function rawInserts(): (pool: PostgresPool, batch: ExecutionRecord[]) => Promise<void> {
  // Like the store, each distinct state object is serialised, hashed and written once.
  const stateKeys = new Map<unknown, Buffer>();
  return (pool, batch) =>
    withTransaction(pool, async (client) => {
      const states: unknown[][] = [];
      const links = batch.map(({ entry, workflowState, workflowVersion }) => {
        let key = stateKeys.get(workflowState);
        if (key === undefined) {
          const json = JSON.stringify(workflowState);
          key = sha256(json);
          states.push([key, json]);
          stateKeys.set(workflowState, key);
        }
        return [entry.executionId, key, workflowVersion ?? null];
      });
      const entries = batch.map(({ entry }) => rawEntryValues(entry));
      const models = batch.flatMap(({ entry: e }) =>
        Object.entries(e.cost.models).map(([name, cost]) => [
          e.workspaceId,
          name,
          e.startedAt,
          e.id,
          Math.round(cost.total * 1e9),
          cost.tokens.total,
        ]),
      );
      const words = batch.map(({ entry: e }) => [
        e.id,
        [...rawEntryWords(e), `~level:${e.level}`, `~trigger:${e.trigger}`],
      ]);
      await client.query(valuesInsert("log_entries", entries));
      await client.query(searchInsert(words));
      if (models.length > 0) await client.query(valuesInsert("log_entry_models", models));
      if (states.length > 0) await client.query(valuesInsert("workflow_states", states));
      await client.query(valuesInsert("execution_states", links));
    });
}

/** INSERT INTO table VALUES ($1, ...), (...): every column of each row, in the table's order. */
function valuesInsert(table: string, rows: unknown[][]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const tuples = rows.map((row) => `(${row.map((value) => `$${values.push(value)}`).join(", ")})`);
  return { text: `INSERT INTO ${table} VALUES ${tuples.join(", ")}`, values };
}

/** INSERT INTO log_search: each entry's id and its words as a tsvector (search-index.ts's facetLexemes too). */
function searchInsert(rows: unknown[][]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const tuples = rows.map(
    ([id, words]) => `($${values.push(id)}, array_to_tsvector($${values.push(words)}::text[]))`,
  );
  return { text: `INSERT INTO log_search (log_id, words) VALUES ${tuples.join(", ")}`, values };
}
