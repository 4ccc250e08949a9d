import type {
  AlertRuleName,
  ExecutionHistory,
  ExecutionScope,
  WindowQuery,
  WindowStats,
} from "../domain/alert-rules.js";
import { type AlertStateRecord, type AlertStateRow, alertStateFromRow, alertStateSql } from "./alert-rows.js";
import { type Db, writtenRow } from "./database.js";
import type { Level } from "./records.js";

/** D21: one alert per (subscription, workflow) per hour at most; the one place this length is named. */
export const alertCooldownMs = 60 * 60 * 1000;

export interface AlertClaim {
  subscriptionId: string;
  workflowId: string;
  rule: AlertRuleName;
  /** The tripping execution's end (D21 "now"). */
  firedAt: number;
  eventId: string;
  reason: string;
  /** alertCooldownMs unless a test scales time down (the no-activity watcher's hours). */
  cooldownMs?: number;
}

/** The end of a pair's firing (D34), claimed by the execution that shows the rule no longer holds. */
export interface ResolutionClaim {
  subscriptionId: string;
  workflowId: string;
  /** Only a firing of this rule is resolved: one of a rule the subscription no longer has is not judged. */
  rule: AlertRuleName;
  /** The resolving execution's end: never before the firing it resolves. */
  resolvedAt: number;
  eventId: string;
  reason: string;
}

// Every read walks log_entries_by_workflow_time (workflow_id, started_at): a rule reads one workflow's
// recent rows, never the table (issue 6: fast with millions of log rows). The trigger filter is bound
// as a JSON array so one prepared statement serves every filter.
const inScope = `workflow_id = @workflowId
  AND (json_array_length(@triggers) = 0 OR trigger IN (SELECT value FROM json_each(@triggers)))`;

const sql = {
  lastLevels: `SELECT level FROM log_entries WHERE ${inScope} AND started_at <= @untilStartedAt
    ORDER BY started_at DESC LIMIT @limit`,
  windowStats: `SELECT count(*) AS executions, coalesce(sum(level = 'error'), 0) AS errors,
      avg(total_duration_ms) AS averageDurationMs
    FROM log_entries WHERE ${inScope} AND started_at BETWEEN @fromStartedAt AND @untilStartedAt
      AND id <> @excludeLogId`,
  firstStartedAt: "SELECT min(started_at) AS first FROM log_entries WHERE workflow_id = ?",
} as const;

/**
 * The data behind the alert rules (D21): a workflow's recent executions, and per (subscription, workflow)
 * the last firing and whether it is over (D34). Firing and resolution alternate, each claimed by one
 * conditional write, so that two evaluations, even in two processes, can never both fire nor both resolve.
 */
export class AlertsStore implements ExecutionHistory {
  private readonly statements;
  private readonly claimOnce;
  private readonly resolveOnce;

  constructor(private readonly db: Db) {
    this.statements = {
      lastLevels: db.prepare(sql.lastLevels),
      windowStats: db.prepare(sql.windowStats),
      firstStartedAt: db.prepare(sql.firstStartedAt),
      fire: db.prepare(alertStateSql.fire),
      resolve: db.prepare(alertStateSql.resolve),
      state: db.prepare(alertStateSql.state),
      states: db.prepare(alertStateSql.states),
    };
    // A retried fan-out or watcher must find the claim it already made, not lose its event: the same
    // event id is answered from the row, unchanged (a later resolution of that firing stays).
    this.claimOnce = db.transaction((alert: AlertClaim & { cooldownMs: number }): boolean => {
      if (this.stateOf(alert.subscriptionId, alert.workflowId)?.lastEventId === alert.eventId) return true;
      return writtenRow(this.statements.fire, alert) !== undefined;
    });
    this.resolveOnce = db.transaction((resolution: ResolutionClaim): AlertStateRecord | undefined => {
      const state = this.stateOf(resolution.subscriptionId, resolution.workflowId);
      if (state?.resolvedEventId === resolution.eventId) return state;
      const row = writtenRow<AlertStateRow>(this.statements.resolve, resolution);
      return row && alertStateFromRow(row);
    });
  }

  /** The levels of the scope's latest executions started up to `untilStartedAt`, newest first. */
  async lastLevels(scope: ExecutionScope, untilStartedAt: number, limit: number): Promise<Level[]> {
    const rows = this.statements.lastLevels.all({ ...scopeParameters(scope), untilStartedAt, limit });
    return (rows as { level: Level }[]).map((row) => row.level);
  }

  async windowStats(query: WindowQuery): Promise<WindowStats> {
    return this.statements.windowStats.get(windowParameters(query)) as WindowStats;
  }

  /** When the workflow was first seen running, whatever its trigger; undefined before its first execution. */
  async firstStartedAt(workflowId: string): Promise<number | undefined> {
    const row = this.statements.firstStartedAt.get(workflowId) as { first: number | null };
    return row.first ?? undefined;
  }

  /**
   * True when this alert may be sent: the pair's last firing is resolved (D34) and none fired within the
   * cooldown (D21).
   */
  async claim(alert: AlertClaim): Promise<boolean> {
    return this.claimOnce.immediate({ cooldownMs: alertCooldownMs, ...alert });
  }

  /**
   * Ends the pair's firing of the rule (D34), never held back by the cooldown; answers the state with the
   * firing it resolved, or undefined when there is none to resolve (never fired, already resolved).
   */
  async resolve(resolution: ResolutionClaim): Promise<AlertStateRecord | undefined> {
    return this.resolveOnce.immediate(resolution);
  }

  /** The pair's last firing and whether it is over; undefined when its rule never fired. */
  async state(subscriptionId: string, workflowId: string): Promise<AlertStateRecord | undefined> {
    return this.stateOf(subscriptionId, workflowId);
  }

  private stateOf(subscriptionId: string, workflowId: string): AlertStateRecord | undefined {
    const row = this.statements.state.get({ subscriptionId, workflowId }) as AlertStateRow | undefined;
    return row && alertStateFromRow(row);
  }

  /** The last alert of each workflow of a subscription. */
  async states(subscriptionId: string): Promise<AlertStateRecord[]> {
    return (this.statements.states.all({ subscriptionId }) as AlertStateRow[]).map(alertStateFromRow);
  }

  /** The plans of the rule queries, for tests that hold them to the index. */
  async explain(): Promise<string[]> {
    const parameters = {
      ...windowParameters({ workflowId: "wf", triggers: ["api"], fromStartedAt: 0, untilStartedAt: 1 }),
      limit: 1,
    };
    return Object.values(sql).flatMap((query) => {
      const statement = this.db.prepare(`EXPLAIN QUERY PLAN ${query}`);
      const rows = query.includes("?") ? statement.all("wf") : statement.all(parameters);
      return (rows as { detail: string }[]).map((row) => row.detail);
    });
  }
}

function scopeParameters(scope: ExecutionScope) {
  return { workflowId: scope.workflowId, triggers: JSON.stringify(scope.triggers) };
}

function windowParameters(query: WindowQuery) {
  return {
    ...scopeParameters(query),
    fromStartedAt: query.fromStartedAt,
    untilStartedAt: query.untilStartedAt,
    excludeLogId: query.excludeLogId ?? "",
  };
}
