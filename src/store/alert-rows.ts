import type { AlertRuleName } from "../domain/alert-rules.js";

/** D34: a pair's last firing is `firing` until the rule stops holding, then `resolved`. */
export type AlertStatus = "firing" | "resolved";

/** What a user sees of a (subscription, workflow) alert (issue 6, item 6; D34). */
export interface AlertStateRecord {
  subscriptionId: string;
  workflowId: string;
  rule: AlertRuleName;
  lastFiredAt: number;
  lastEventId: string;
  reason: string;
  status: AlertStatus;
  /** null while firing. */
  resolvedAt: number | null;
  resolutionReason: string | null;
  resolvedEventId: string | null;
}

/**
 * alert_state as both stores write and read it (D21, D34, D32: the same columns in SQLite and
 * PostgreSQL), with `@name` parameters. Firing and resolving are each one conditional write, so two
 * evaluations, in any processes, can never both fire nor both resolve.
 */
export const alertStateSql = {
  // D34: a pair fires again only once its last firing is resolved (or was of a rule the subscription
  // no longer has), and D21's cooldown still counts from that firing, so a rule that flaps alerts at
  // most once an hour. A new firing clears the resolution it follows. The firing's own event never
  // fires it again: a retried claim is answered from the row, which it leaves as it is.
  fire: `INSERT INTO alert_state (subscription_id, workflow_id, rule, last_fired_at, last_event_id, reason)
    VALUES (@subscriptionId, @workflowId, @rule, @firedAt, @eventId, @reason)
    ON CONFLICT (subscription_id, workflow_id) DO UPDATE SET rule = excluded.rule,
      last_fired_at = excluded.last_fired_at, last_event_id = excluded.last_event_id,
      reason = excluded.reason, status = 'firing', resolved_at = NULL, resolution_reason = NULL,
      resolved_event_id = NULL
    WHERE (alert_state.status = 'resolved' OR alert_state.rule <> excluded.rule)
      AND alert_state.last_fired_at <= excluded.last_fired_at - @cooldownMs
      AND alert_state.last_event_id <> excluded.last_event_id
    RETURNING subscription_id`,
  // D34: no cooldown; only a firing of the same rule, by an execution that ended no earlier.
  resolve: `UPDATE alert_state SET status = 'resolved', resolved_at = @resolvedAt,
      resolution_reason = @reason, resolved_event_id = @eventId
    WHERE subscription_id = @subscriptionId AND workflow_id = @workflowId AND status = 'firing'
      AND rule = @rule AND last_fired_at <= @resolvedAt
    RETURNING *`,
  state: "SELECT * FROM alert_state WHERE subscription_id = @subscriptionId AND workflow_id = @workflowId",
  states: "SELECT * FROM alert_state WHERE subscription_id = @subscriptionId ORDER BY workflow_id",
} as const;

/** A row of alert_state. */
export interface AlertStateRow {
  subscription_id: string;
  workflow_id: string;
  rule: AlertRuleName;
  last_fired_at: number;
  last_event_id: string;
  reason: string;
  status: AlertStatus;
  resolved_at: number | null;
  resolution_reason: string | null;
  resolved_event_id: string | null;
}

export function alertStateFromRow(row: AlertStateRow): AlertStateRecord {
  return {
    subscriptionId: row.subscription_id,
    workflowId: row.workflow_id,
    rule: row.rule,
    lastFiredAt: row.last_fired_at,
    lastEventId: row.last_event_id,
    reason: row.reason,
    status: row.status,
    resolvedAt: row.resolved_at,
    resolutionReason: row.resolution_reason,
    resolvedEventId: row.resolved_event_id,
  };
}
