import type { CappedCreate } from "../records.js";
import type { StoreArea } from "../store.js";
import type { ScheduleRecord, TriggersStore, WebhookRecord } from "../triggers-store.js";
import { type PostgresPool, withTransaction } from "./database.js";

const scheduleColumns = `id, workflow_id AS "workflowId", cron, billed_user_id AS "billedUserId", created_at AS "createdAt"`;

/**
 * Workflow webhooks and schedules on PostgreSQL (D15, D31, D32): SQLite's TriggersStore, as promises. A
 * schedule is recorded under a lock on its workflow's row, so neither a deletion nor another machine's
 * schedule can come between the check and the insert.
 */
export class PostgresTriggersStore implements StoreArea<TriggersStore> {
  constructor(private readonly pool: PostgresPool) {}

  async setWebhook(webhook: WebhookRecord, tokenHash: Buffer): Promise<void> {
    await this.pool.query(
      `INSERT INTO webhook_triggers (workflow_id, token_hash, billed_user_id, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workflow_id) DO UPDATE SET token_hash = excluded.token_hash,
         billed_user_id = excluded.billed_user_id, created_at = excluded.created_at`,
      [webhook.workflowId, tokenHash, webhook.billedUserId, webhook.createdAt],
    );
  }

  async deleteWebhook(workflowId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query("DELETE FROM webhook_triggers WHERE workflow_id = $1", [
      workflowId,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async webhookByToken(workflowId: string, tokenHash: Buffer): Promise<WebhookRecord | undefined> {
    const { rows } = await this.pool.query<WebhookRecord>(
      `SELECT workflow_id AS "workflowId", billed_user_id AS "billedUserId", created_at AS "createdAt"
       FROM webhook_triggers WHERE workflow_id = $1 AND token_hash = $2`,
      [workflowId, tokenHash],
    );
    return rows[0];
  }

  async addSchedule(
    schedule: ScheduleRecord,
    max: number,
  ): Promise<CappedCreate<ScheduleRecord> | undefined> {
    return withTransaction(this.pool, async (client) => {
      const live = await client.query(
        "SELECT 1 FROM workflows WHERE id = $1 AND deleted_at IS NULL FOR UPDATE",
        [schedule.workflowId],
      );
      if ((live.rowCount ?? 0) === 0) return undefined;
      const { rows } = await client.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM workflow_schedules WHERE workflow_id = $1",
        [schedule.workflowId],
      );
      const count = rows[0]?.count ?? 0;
      if (count >= max) return { full: count };
      await client.query(
        `INSERT INTO workflow_schedules (id, workflow_id, cron, billed_user_id, created_at)
         VALUES ($1, $2, $3, $4, $5)`,
        [schedule.id, schedule.workflowId, schedule.cron, schedule.billedUserId, schedule.createdAt],
      );
      return { created: schedule };
    });
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    const { rows } = await this.pool.query<ScheduleRecord>(
      `SELECT ${scheduleColumns} FROM workflow_schedules WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  async listSchedules(workflowId: string): Promise<ScheduleRecord[]> {
    const { rows } = await this.pool.query<ScheduleRecord>(
      `SELECT ${scheduleColumns} FROM workflow_schedules WHERE workflow_id = $1 ORDER BY created_at, id`,
      [workflowId],
    );
    return rows;
  }

  async deleteSchedule(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query("DELETE FROM workflow_schedules WHERE id = $1", [id]);
    return (rowCount ?? 0) > 0;
  }
}
