import type pg from "pg";
import { type DeletedCounts, type DoomedEntry, doomedEntriesSql, selectedCountSql } from "../log-deletion.js";
import type { LogFilter } from "../log-list-sql.js";
import { listOverTime } from "../tenant-reads.js";
import { type PostgresPool, withTransaction } from "./database.js";
import { postgresQuery } from "./logs-store.js";
import { TenantReads } from "./tenant-reads.js";

/**
 * The SQLite LogDeletionStore's deletion on PostgreSQL (D32): the same rows go, a batch's entries at a
 * time, each kind of dependant in one statement over the batch's ids.
 */
export class PostgresLogDeletionStore {
  constructor(
    private readonly pool: PostgresPool,
    private readonly reads = TenantReads.on(pool),
  ) {}

  /** How many entries `filter` selects; a count that grows with the tenant's data, within D46's limit. */
  async count(filter: LogFilter, signal?: AbortSignal): Promise<number> {
    const { rows } = await this.reads.run(signal, listOverTime, (client) =>
      client.query<{ n: string }>(postgresQuery((bind) => selectedCountSql(filter, bind))),
    );
    return Number(rows[0]?.n ?? 0);
  }

  async deleteBatch(filter: LogFilter, limit: number): Promise<DeletedCounts> {
    return withTransaction(this.pool, async (client) => {
      const { rows: doomed } = await client.query<DoomedEntry>(
        postgresQuery((bind) => doomedEntriesSql(filter, limit, bind)),
      );
      const ids = doomed.map((e) => e.id);
      const executions = doomed.map((e) => e.execution_id);
      const starts = doomed.map((e) => e.started_at);
      const run = async (sql: string, values: unknown[]) => (await client.query(sql, values)).rowCount ?? 0;
      const deliveryAttempts = await run(
        `DELETE FROM delivery_attempts WHERE delivery_id IN
           (SELECT id FROM deliveries WHERE log_id = ANY($1::text[]))`,
        [ids],
      );
      const deliveries = await run("DELETE FROM deliveries WHERE log_id = ANY($1::text[])", [ids]);
      await run("DELETE FROM notification_outbox WHERE log_id = ANY($1::text[])", [ids]);
      await run(
        `DELETE FROM log_entry_models m USING unnest($1::text[], $2::bigint[]) AS d (id, started_at)
         WHERE m.workspace_id = $3 AND m.started_at = d.started_at AND m.log_id = d.id`,
        [ids, starts, filter.workspaceId],
      );
      const { rows: states } = await client.query<{ state_hash: Buffer }>(
        "DELETE FROM execution_states WHERE execution_id = ANY($1::text[]) RETURNING state_hash",
        [executions],
      );
      const parkedOutputs = await run("DELETE FROM parked_outputs WHERE execution_id = ANY($1::text[])", [
        executions,
      ]);
      // D47: a deleted retry no longer retries anything; a deleted original's retries keep its id.
      await run("DELETE FROM execution_retries WHERE execution_id = ANY($1::text[])", [executions]);
      const entries = await run("DELETE FROM log_entries WHERE id = ANY($1::text[])", [ids]);
      const snapshots = await deleteUnusedStates(client, states);
      return { entries, snapshots, deliveries, deliveryAttempts, parkedOutputs };
    });
  }
}

/**
 * Deletes the states no execution uses any more. Each is locked first and only then looked up, in a
 * statement of its own that sees every commit before it: an execution written meanwhile either
 * committed first, and keeps its state, or waits for this transaction and then fails its insert
 * against the foreign key, and its log write (a Temporal activity) is retried and writes the state anew.
 */
async function deleteUnusedStates(client: pg.PoolClient, states: { state_hash: Buffer }[]): Promise<number> {
  const hashes = [...new Map(states.map((s) => [s.state_hash.toString("hex"), s.state_hash])).values()];
  if (hashes.length === 0) return 0;
  await client.query("SELECT 1 FROM workflow_states WHERE hash = ANY($1::bytea[]) ORDER BY hash FOR UPDATE", [
    hashes,
  ]);
  const { rowCount } = await client.query(
    `DELETE FROM workflow_states w WHERE w.hash = ANY($1::bytea[])
     AND NOT EXISTS (SELECT 1 FROM execution_states e WHERE e.state_hash = w.hash)`,
    [hashes],
  );
  return rowCount ?? 0;
}
