import { fanOutIntentColumns } from "../outbox-rows.js";
import type { FanOutIntent, OutboxStore } from "../outbox-store.js";
import type { StoreArea } from "../store.js";
import type { PostgresPool } from "./database.js";

/**
 * The due intents are locked as they are picked, and ones another dispatcher holds are skipped: without
 * the lock, two dispatchers could pick the same rows, and the second's update would still match them
 * after waiting for the first, so both would start the same fan-out. A row the first claimed in the
 * meantime no longer passes `not_before <= now` once locked, so it is left out.
 */
const claimSql = `UPDATE notification_outbox SET not_before = $1
  WHERE log_id IN (SELECT log_id FROM notification_outbox WHERE not_before <= $2
                   ORDER BY not_before LIMIT $3 FOR UPDATE SKIP LOCKED)
  RETURNING ${fanOutIntentColumns}`;

/**
 * The notification outbox on PostgreSQL (issue 12, D32): SQLite's OutboxStore, as promises, with each
 * intent claimed by one dispatcher among all machines for the length of its lease.
 */
export class PostgresOutboxStore implements StoreArea<OutboxStore> {
  constructor(private readonly pool: PostgresPool) {}

  async claim(now: number, leaseMs: number, limit: number): Promise<FanOutIntent[]> {
    return (await this.pool.query<FanOutIntent>(claimSql, [now + leaseMs, now, limit])).rows;
  }

  async remove(logId: string): Promise<void> {
    await this.pool.query("DELETE FROM notification_outbox WHERE log_id = $1", [logId]);
  }

  async postpone(logId: string, at: number): Promise<void> {
    await this.pool.query("UPDATE notification_outbox SET not_before = $1 WHERE log_id = $2", [at, logId]);
  }

  async holds(logId: string): Promise<boolean> {
    return (
      ((await this.pool.query("SELECT 1 FROM notification_outbox WHERE log_id = $1", [logId])).rowCount ??
        0) > 0
    );
  }

  async nextDue(): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ at: number | null }>(
      "SELECT min(not_before) AS at FROM notification_outbox",
    );
    return rows[0]?.at ?? undefined;
  }
}
