import type { Db } from "./database.js";
import type { Trigger } from "./records.js";

/**
 * What the no-activity watcher reads (D21). It claims its cooldown through AlertsStore.claim, the same
 * conditional upsert the execution-driven rules use, so the cooldown is shared per (subscription, workflow).
 */
export class InactivityStore {
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      // Walks log_entries_by_workflow_time backwards; the trigger filter (D21) only skips rows.
      lastStartedAt: db.prepare(
        `SELECT started_at FROM log_entries
         WHERE workflow_id = @workflowId
           AND (@triggers = '[]' OR trigger IN (SELECT value FROM json_each(@triggers)))
         ORDER BY started_at DESC LIMIT 1`,
      ),
      lastFiredAt: db.prepare(
        "SELECT last_fired_at FROM alert_state WHERE subscription_id = ? AND workflow_id = ?",
      ),
    };
  }

  /** When the workflow's latest execution that passes the trigger filter started; null when none did. */
  lastExecutionAt(workflowId: string, triggerFilter: Trigger[]): number | null {
    const row = this.statements.lastStartedAt.get({ workflowId, triggers: JSON.stringify(triggerFilter) }) as
      | { started_at: number }
      | undefined;
    return row?.started_at ?? null;
  }

  /** When any alert of the subscription last fired for the workflow; null when none has. */
  lastFiredAt(subscriptionId: string, workflowId: string): number | null {
    const row = this.statements.lastFiredAt.get(subscriptionId, workflowId) as
      | { last_fired_at: number }
      | undefined;
    return row?.last_fired_at ?? null;
  }
}
