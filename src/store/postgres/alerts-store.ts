import type { ExecutionScope, WindowQuery, WindowStats } from "../../domain/alert-rules.js";
import {
  type AlertStateRecord,
  type AlertStateRow,
  alertStateFromRow,
  alertStateSql,
} from "../alert-rows.js";
import { type AlertClaim, type AlertsStore, alertCooldownMs, type ResolutionClaim } from "../alerts-store.js";
import type { Level } from "../records.js";
import type { StoreArea } from "../store.js";
import type { PostgresPool } from "./database.js";
import { namedStatement } from "./named-parameters.js";

/**
 * A workflow's executions that pass a trigger filter (D21), bound as one text[] so one statement serves
 * every filter; an empty filter means all triggers.
 */
export const inExecutionScope = `workflow_id = @workflowId
  AND (cardinality(@triggers::text[]) = 0 OR trigger = ANY(@triggers::text[]))`;

// As on SQLite, every read walks log_entries_by_workflow_time (workflow_id, started_at).
const ruleSql = {
  lastLevels: `SELECT level FROM log_entries WHERE ${inExecutionScope} AND started_at <= @untilStartedAt
    ORDER BY started_at DESC LIMIT @limit`,
  windowStats: `SELECT count(*) AS executions, count(*) FILTER (WHERE level = 'error') AS errors,
      avg(total_duration_ms)::double precision AS "averageDurationMs"
    FROM log_entries WHERE ${inExecutionScope} AND started_at BETWEEN @fromStartedAt AND @untilStartedAt
      AND id <> @excludeLogId`,
  firstStartedAt: "SELECT min(started_at) AS first FROM log_entries WHERE workflow_id = @workflowId",
} as const;

const statements = {
  lastLevels: namedStatement(ruleSql.lastLevels),
  windowStats: namedStatement(ruleSql.windowStats),
  firstStartedAt: namedStatement(ruleSql.firstStartedAt),
  fire: namedStatement(alertStateSql.fire),
  resolve: namedStatement(alertStateSql.resolve),
  state: namedStatement(alertStateSql.state),
  states: namedStatement(alertStateSql.states),
};

/**
 * The data behind the alert rules on PostgreSQL (D21, D34, D32): SQLite's AlertsStore, as promises.
 * A firing or a resolution is claimed by one conditional statement (alert-rows.ts), atomic across
 * processes and machines: a second claim waits for the first's row lock, then judges the row it left.
 * Only when that statement changed nothing is the row read back, to answer a retried claim of the same
 * event (a fan-out or watcher retried after its claim) as SQLite does.
 */
export class PostgresAlertsStore implements StoreArea<AlertsStore> {
  constructor(private readonly pool: PostgresPool) {}

  async lastLevels(scope: ExecutionScope, untilStartedAt: number, limit: number): Promise<Level[]> {
    const { rows } = await this.pool.query<{ level: Level }>(
      statements.lastLevels({ ...scope, untilStartedAt, limit }),
    );
    return rows.map((row) => row.level);
  }

  async windowStats(query: WindowQuery): Promise<WindowStats> {
    const { rows } = await this.pool.query<WindowStats>(statements.windowStats(windowParameters(query)));
    return rows[0] as WindowStats;
  }

  async firstStartedAt(workflowId: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ first: number | null }>(
      statements.firstStartedAt({ workflowId }),
    );
    return rows[0]?.first ?? undefined;
  }

  async claim(alert: AlertClaim): Promise<boolean> {
    const fired = await this.pool.query(statements.fire({ cooldownMs: alertCooldownMs, ...alert }));
    if (fired.rowCount) return true;
    return (await this.state(alert.subscriptionId, alert.workflowId))?.lastEventId === alert.eventId;
  }

  async resolve(resolution: ResolutionClaim): Promise<AlertStateRecord | undefined> {
    const { rows } = await this.pool.query<AlertStateRow>(statements.resolve(resolution));
    if (rows[0]) return alertStateFromRow(rows[0]);
    const state = await this.state(resolution.subscriptionId, resolution.workflowId);
    return state?.resolvedEventId === resolution.eventId ? state : undefined;
  }

  async state(subscriptionId: string, workflowId: string): Promise<AlertStateRecord | undefined> {
    const { rows } = await this.pool.query<AlertStateRow>(statements.state({ subscriptionId, workflowId }));
    return rows[0] && alertStateFromRow(rows[0]);
  }

  async states(subscriptionId: string): Promise<AlertStateRecord[]> {
    const { rows } = await this.pool.query<AlertStateRow>(statements.states({ subscriptionId }));
    return rows.map(alertStateFromRow);
  }

  /** The plans of the rule queries, for tests that hold them to the index. */
  async explain(): Promise<string[]> {
    const parameters = {
      ...windowParameters({ workflowId: "wf", triggers: ["api"], fromStartedAt: 0, untilStartedAt: 1 }),
      limit: 1,
    };
    const plans = await Promise.all(
      Object.values(ruleSql).map(async (sql) => {
        const { text, values } = namedStatement(sql)(parameters);
        return (await this.pool.query<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, values)).rows;
      }),
    );
    return plans.flat().map((row) => row["QUERY PLAN"]);
  }
}

function windowParameters(query: WindowQuery) {
  return { ...query, excludeLogId: query.excludeLogId ?? "" };
}
