import type { InactivityStore } from "../inactivity-store.js";
import type { Trigger } from "../records.js";
import type { StoreArea } from "../store.js";
import type { PostgresPool } from "./database.js";

/** What the no-activity watcher reads (D21, D32): SQLite's InactivityStore, with lists as text[]. */
export class PostgresInactivityStore implements StoreArea<InactivityStore> {
  constructor(private readonly pool: PostgresPool) {}

  /** Walks log_entries_by_workflow_time backwards; the trigger filter only skips rows. */
  async lastExecutionAt(workflowId: string, triggerFilter: Trigger[]): Promise<number | null> {
    const { rows } = await this.pool.query<{ started_at: number }>(
      `SELECT started_at FROM log_entries
       WHERE workflow_id = $1 AND (cardinality($2::text[]) = 0 OR trigger = ANY($2::text[]))
       ORDER BY started_at DESC LIMIT 1`,
      [workflowId, triggerFilter],
    );
    return rows[0]?.started_at ?? null;
  }

  /** A keyset page, in id order, of the live, active subscriptions whose rule is one of `rules`. */
  async watchedSubscriptionIds(after: string, limit: number, rules: readonly string[]): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM notification_subscriptions
       WHERE id > $1 AND active = 1 AND deleted_at IS NULL
         AND (alert_rule_json::jsonb ->> 'rule') = ANY($2::text[])
       ORDER BY id LIMIT $3`,
      [after, rules, limit],
    );
    return rows.map((row) => row.id);
  }
}
