import type { Db } from "./database.js";

/** How long a parked output left behind by an execution that never logged (terminated) is kept. */
export const parkedOutputRetentionMs = 7 * 24 * 60 * 60 * 1000;

/**
 * Block outputs parked outside Temporal's payloads (a claim check), in two cases (block-activities.ts):
 *
 * - An HTTP block's first try runs in its execution's workflow task, and every first try that ends in one
 *   task travels in that task's completion, which Temporal refuses over 4 MiB: parallel branches answering
 *   large outputs at once failed their task again and again, refetching every answer each time. A first
 *   try whose outcome would not fit beside the others parks it, and the block activity that takes over
 *   hands it back as its own result, without calling the API again.
 * - A block activity's request carries the outputs the block references, and Temporal refuses a payload
 *   over 2 MiB: it terminated an execution whose block posted the results of a large parallel, unlogged.
 *   Such outputs are parked by a local activity, whose input never leaves the worker, and the block
 *   activity reads them back.
 *
 * A parked value is read, never consumed, so a block activity whose worker dies after reading runs again
 * and finds it; the execution's log write releases them all. Rows are transient: `flowlog migrate-data`
 * does not copy them.
 */
export class ParkedOutputsStore {
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      park: db.prepare(
        `INSERT INTO parked_outputs (execution_id, key, value_json, parked_at)
         VALUES (@executionId, @key, @valueJson, @now)
         ON CONFLICT (execution_id, key) DO UPDATE SET value_json = excluded.value_json`,
      ),
      sweep: db.prepare("DELETE FROM parked_outputs WHERE parked_at < ?"),
      read: db.prepare("SELECT value_json FROM parked_outputs WHERE execution_id = ? AND key = ?").pluck(),
      release: db.prepare("DELETE FROM parked_outputs WHERE execution_id = ?"),
    };
  }

  /**
   * Parks a value (as JSON) under the execution and a key of the caller's; parking the same key again
   * replaces it (a retried workflow task runs its first tries again). Outputs older than the retention,
   * whose executions never logged, go at the same time.
   */
  async park(executionId: string, key: string, valueJson: string, now: number): Promise<void> {
    this.statements.sweep.run(now - parkedOutputRetentionMs);
    this.statements.park.run({ executionId, key, valueJson, now });
  }

  /** The parked value's JSON, or undefined when there is none (released, or never parked). */
  async read(executionId: string, key: string): Promise<string | undefined> {
    return this.statements.read.get(executionId, key) as string | undefined;
  }

  /** Drops every output the execution parked: its log entry holds them now. */
  async release(executionId: string): Promise<void> {
    this.statements.release.run(executionId);
  }
}
