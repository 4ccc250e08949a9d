import type { Db } from "./database.js";
import type { Trigger } from "./records.js";

/**
 * What the no-activity watcher reads (D21). It reads and claims its alert state through AlertsStore, as
 * the execution-driven rules do, so the cooldown and D34's alternation are shared per (subscription,
 * workflow).
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
      // Keyset pages in id order: a restore reads a bounded page at a time, however many there are.
      watchedSubscriptions: db
        .prepare(
          `SELECT id FROM notification_subscriptions
           WHERE id > @after AND active = 1 AND deleted_at IS NULL
             AND json_extract(alert_rule_json, '$.rule') IN (SELECT value FROM json_each(@rules))
           ORDER BY id LIMIT @limit`,
        )
        .pluck(),
    };
  }

  /** When the workflow's latest execution that passes the trigger filter started; null when none did. */
  async lastExecutionAt(workflowId: string, triggerFilter: Trigger[]): Promise<number | null> {
    const row = this.statements.lastStartedAt.get({ workflowId, triggers: JSON.stringify(triggerFilter) }) as
      | { started_at: number }
      | undefined;
    return row?.started_at ?? null;
  }

  /**
   * The ids of live, active subscriptions whose rule is one of `rules` (the timer-judged ones), after
   * `after` in id order: a page of the subscriptions that need no-activity watchers (issue 18, item 4).
   */
  async watchedSubscriptionIds(after: string, limit: number, rules: readonly string[]): Promise<string[]> {
    return this.statements.watchedSubscriptions.all({
      after,
      limit,
      rules: JSON.stringify(rules),
    }) as string[];
  }
}
