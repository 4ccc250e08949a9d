import type { Db } from "./database.js";
import {
  type DeletedCounts,
  type DoomedEntry,
  doomedEntriesSql,
  noneDeleted,
  selectedCountSql,
} from "./log-deletion.js";
import type { LogFilter } from "./log-list-sql.js";
import { sqliteQuery } from "./sqlite-query.js";

/**
 * Deletes log entries with everything that hangs off them (D41, D43): their models rows, deliveries and
 * the deliveries' attempts, a fan-out still waiting in the outbox, parked outputs, and each workflow state
 * (D13) once no remaining entry uses it. Alert state is the rule's, not the entry's (D21, D34): it stays,
 * so a purge neither re-fires an alert nor forgets a firing. Usage is kept apart in usage_periods and
 * never read from the entries (D12), so no usage figure moves.
 *
 * One batch is one write transaction of a bounded number of entries: the caller loops (deleteInBatches),
 * and between batches the write lock is free for the API and the worker.
 */
export class LogDeletionStore {
  private readonly statements;
  private readonly selections = new Map<string, ReturnType<Db["prepare"]>>();

  constructor(private readonly db: Db) {
    this.statements = {
      attempts: db.prepare(
        "DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE log_id = ?)",
      ),
      deliveries: db.prepare("DELETE FROM deliveries WHERE log_id = ?"),
      outbox: db.prepare("DELETE FROM notification_outbox WHERE log_id = ?"),
      // Along log_entry_models_by_time: the entry's workspace and start lead to its few rows.
      models: db.prepare(
        "DELETE FROM log_entry_models WHERE workspace_id = ? AND started_at = ? AND log_id = ?",
      ),
      executionState: db.prepare("DELETE FROM execution_states WHERE execution_id = ? RETURNING state_hash"),
      parked: db.prepare("DELETE FROM parked_outputs WHERE execution_id = ?"),
      // D47: a deleted retry no longer retries anything; a deleted original's retries keep its id.
      retry: db.prepare("DELETE FROM execution_retries WHERE execution_id = ?"),
      entry: db.prepare("DELETE FROM log_entries WHERE id = ?"),
      unusedState: db.prepare(
        `DELETE FROM workflow_states WHERE hash = @hash
         AND NOT EXISTS (SELECT 1 FROM execution_states WHERE state_hash = @hash)`,
      ),
    };
  }

  /** How many entries `filter` selects. */
  async count(filter: LogFilter, _signal?: AbortSignal): Promise<number> {
    const { sql, params } = sqliteQuery((bind) => selectedCountSql(filter, bind));
    return (this.selection(sql).get(params) as { n: number }).n;
  }

  /**
   * Deletes the oldest `limit` entries `filter` selects, and their dependants, in one transaction.
   * Fewer than `limit` entries deleted means none are left.
   */
  async deleteBatch(filter: LogFilter, limit: number): Promise<DeletedCounts> {
    const { sql, params } = sqliteQuery((bind) => doomedEntriesSql(filter, limit, bind));
    const select = this.selection(sql);
    return this.db
      .transaction(() => {
        const doomed = select.all(params) as DoomedEntry[];
        const counts = { ...noneDeleted };
        const states = new Set<string>();
        const hashes: Buffer[] = [];
        for (const entry of doomed) {
          counts.deliveryAttempts += this.statements.attempts.run(entry.id).changes;
          counts.deliveries += this.statements.deliveries.run(entry.id).changes;
          this.statements.outbox.run(entry.id);
          this.statements.models.run(filter.workspaceId, entry.started_at, entry.id);
          for (const { state_hash } of this.statements.executionState.all(entry.execution_id) as {
            state_hash: Buffer;
          }[]) {
            const key = state_hash.toString("hex");
            if (!states.has(key)) hashes.push(state_hash);
            states.add(key);
          }
          counts.parkedOutputs += this.statements.parked.run(entry.execution_id).changes;
          this.statements.retry.run(entry.execution_id);
          counts.entries += this.statements.entry.run(entry.id).changes;
        }
        for (const hash of hashes) counts.snapshots += this.statements.unusedState.run({ hash }).changes;
        return counts;
      })
      .immediate();
  }

  private selection(sql: string): ReturnType<Db["prepare"]> {
    let statement = this.selections.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.selections.set(sql, statement);
    }
    return statement;
  }
}
