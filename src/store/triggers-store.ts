import type { Db } from "./database.js";

export interface WebhookRecord {
  workflowId: string;
  /** Whose usage the executions it starts count against (D12): who created the webhook. */
  billedUserId: string;
  createdAt: number;
}

export interface ScheduleRecord {
  id: string;
  workflowId: string;
  cron: string;
  billedUserId: string;
  createdAt: number;
}

/**
 * The inbound webhook of each workflow, stored by the SHA-256 of its token like API keys (D5), and the
 * schedules whose timing Temporal Schedules own (D15); pausing is Temporal's state, not ours.
 */
export class TriggersStore {
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      upsertWebhook: db.prepare(
        `INSERT INTO webhook_triggers (workflow_id, token_hash, billed_user_id, created_at)
         VALUES (@workflowId, @tokenHash, @billedUserId, @createdAt)
         ON CONFLICT (workflow_id) DO UPDATE SET token_hash = excluded.token_hash,
           billed_user_id = excluded.billed_user_id, created_at = excluded.created_at`,
      ),
      deleteWebhook: db.prepare("DELETE FROM webhook_triggers WHERE workflow_id = ?"),
      webhookByToken: db.prepare(
        `SELECT workflow_id AS workflowId, billed_user_id AS billedUserId, created_at AS createdAt
         FROM webhook_triggers WHERE workflow_id = ? AND token_hash = ?`,
      ),
      insertSchedule: db.prepare(
        `INSERT INTO workflow_schedules (id, workflow_id, cron, billed_user_id, created_at)
         VALUES (@id, @workflowId, @cron, @billedUserId, @createdAt)`,
      ),
      scheduleById: db.prepare(
        `SELECT id, workflow_id AS workflowId, cron, billed_user_id AS billedUserId, created_at AS createdAt
         FROM workflow_schedules WHERE id = ?`,
      ),
      schedulesOf: db.prepare(
        `SELECT id, workflow_id AS workflowId, cron, billed_user_id AS billedUserId, created_at AS createdAt
         FROM workflow_schedules WHERE workflow_id = ? ORDER BY created_at, id`,
      ),
      deleteSchedule: db.prepare("DELETE FROM workflow_schedules WHERE id = ?"),
    };
  }

  setWebhook(webhook: WebhookRecord, tokenHash: Buffer): void {
    this.statements.upsertWebhook.run({ ...webhook, tokenHash });
  }

  deleteWebhook(workflowId: string): boolean {
    return this.statements.deleteWebhook.run(workflowId).changes > 0;
  }

  /** The webhook whose token has this hash, or undefined: a wrong token and no webhook look the same. */
  webhookByToken(workflowId: string, tokenHash: Buffer): WebhookRecord | undefined {
    return this.statements.webhookByToken.get(workflowId, tokenHash) as WebhookRecord | undefined;
  }

  addSchedule(schedule: ScheduleRecord): void {
    this.statements.insertSchedule.run(schedule);
  }

  getSchedule(id: string): ScheduleRecord | undefined {
    return this.statements.scheduleById.get(id) as ScheduleRecord | undefined;
  }

  listSchedules(workflowId: string): ScheduleRecord[] {
    return this.statements.schedulesOf.all(workflowId) as ScheduleRecord[];
  }

  deleteSchedule(id: string): boolean {
    return this.statements.deleteSchedule.run(id).changes > 0;
  }
}
