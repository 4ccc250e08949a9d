import type { Db } from "./database.js";
import type { CappedCreate } from "./records.js";

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
 * schedules whose timing Temporal Schedules own (D15); pausing is Temporal's state, not ours. A schedule
 * row exists as long as its Temporal Schedule may: written before it is created, removed after it is
 * deleted, so a row left by a failure is the record of what is still to end (D31).
 */
export class TriggersStore {
  private readonly statements;
  private readonly reserveSchedule;

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
      scheduleCount: db.prepare("SELECT count(*) FROM workflow_schedules WHERE workflow_id = ?").pluck(),
      workflowIsLive: db.prepare("SELECT 1 FROM workflows WHERE id = ? AND deleted_at IS NULL").pluck(),
    };
    this.reserveSchedule = db.transaction(
      (schedule: ScheduleRecord, max: number): CappedCreate<ScheduleRecord> | undefined => {
        if (this.statements.workflowIsLive.get(schedule.workflowId) === undefined) return undefined;
        const count = this.statements.scheduleCount.get(schedule.workflowId) as number;
        if (count >= max) return { full: count };
        this.statements.insertSchedule.run(schedule);
        return { created: schedule };
      },
    );
  }

  async setWebhook(webhook: WebhookRecord, tokenHash: Buffer): Promise<void> {
    this.statements.upsertWebhook.run({ ...webhook, tokenHash });
  }

  async deleteWebhook(workflowId: string): Promise<boolean> {
    return this.statements.deleteWebhook.run(workflowId).changes > 0;
  }

  /** The webhook whose token has this hash, or undefined: a wrong token and no webhook look the same. */
  async webhookByToken(workflowId: string, tokenHash: Buffer): Promise<WebhookRecord | undefined> {
    return this.statements.webhookByToken.get(workflowId, tokenHash) as WebhookRecord | undefined;
  }

  /**
   * Records a schedule of a live workflow, before its Temporal Schedule exists, unless the workflow
   * already has `max` (D26). Undefined when the workflow is deleted: a deletion (D31) ends every schedule
   * recorded before it, and none can be recorded after it.
   */
  async addSchedule(
    schedule: ScheduleRecord,
    max: number,
  ): Promise<CappedCreate<ScheduleRecord> | undefined> {
    return this.reserveSchedule.immediate(schedule, max);
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    return this.statements.scheduleById.get(id) as ScheduleRecord | undefined;
  }

  async listSchedules(workflowId: string): Promise<ScheduleRecord[]> {
    return this.statements.schedulesOf.all(workflowId) as ScheduleRecord[];
  }

  async deleteSchedule(id: string): Promise<boolean> {
    return this.statements.deleteSchedule.run(id).changes > 0;
  }
}
