import { type Binder, filteredEntries, type LogFilter } from "./log-list-sql.js";

/**
 * The log stats in the store (issue 17): what a stats read asks for (the list's filter and a range of hours)
 * and its SQL in both stores' dialects. The API request becomes this in services/logs/log-stats-request.ts.
 */

export const hourMs = 3_600_000;
export const dayMs = 86_400_000;

/** The entries the stats count: the list's filters but its dates, which the range replaces (D9). */
export type StatsFilter = Omit<LogFilter, "startedFrom" | "startedTo" | "executionId">;

/** Whole UTC hours: from `start` (inclusive) to `end` (exclusive), both Unix milliseconds on an hour. */
export interface HourRange {
  start: number;
  end: number;
}

/** The executions that started in one hour; the percentiles only when there were any. */
export interface HourStatsRecord {
  /** The hour's first millisecond. */
  hour: number;
  executions: number;
  errors: number;
  p50DurationMs?: number;
  p95DurationMs?: number;
}

/** What one model cost on one UTC day, over the day's counted executions that used it. */
export interface DayModelCostRecord {
  /** The day's first millisecond. */
  day: number;
  model: string;
  /** USD, exact to 1e-9 (D30): summed as whole nano-USD. */
  cost: number;
  tokens: number;
}

export interface LogStats {
  /** Every hour of the range, in order, those without executions included. */
  hours: HourStatsRecord[];
  /** By day, then model: only the pairs with executions. */
  modelCosts: DayModelCostRecord[];
}

/** A row of hourStatsSql, in either store. */
export interface HourRow {
  hour: number;
  executions: number;
  errors: number;
  /** The hour's totalDurationMs values, ascending, comma-separated. */
  durations: string;
}

/** A row of modelCostsSql, in either store. */
export interface ModelCostRow {
  day: number;
  model: string;
  cost_nano_usd: number;
  tokens: number;
}

/** The filter as filteredEntries takes it: the range as inclusive bounds on startedAt. */
function entriesIn(filter: StatsFilter, range: HourRange): LogFilter {
  return { ...filter, startedFrom: range.start, startedTo: range.end - 1 };
}

/**
 * Executions, errors and the durations per hour that has executions, in any store's dialect, over the
 * entries the list would give (filteredEntries). The durations come as one text per hour, in ascending
 * order, from which statsOf picks the nearest ranks: an ordered aggregate both stores write alike, and
 * several times faster on SQLite than ranking every row with a window function. Without other filters
 * the time index alone holds everything read (log_entries_by_time carries duration and level).
 */
export function hourStatsSql(filter: StatsFilter, range: HourRange, bind: Binder): string {
  const { from, where, key } = filteredEntries(entriesIn(filter, range), bind);
  return `SELECT ${key.startedAt} / ${hourMs} AS hour, count(*) AS executions,
      sum(CASE WHEN l.level = 'error' THEN 1 ELSE 0 END) AS errors,
      string_agg(CAST(l.total_duration_ms AS text), ',' ORDER BY l.total_duration_ms) AS durations
    FROM ${from} WHERE ${where.join(" AND ")}
    GROUP BY 1 ORDER BY 1`;
}

/**
 * Cost and tokens per day and model, in any store's dialect, from log_entry_models, which holds each
 * model's share of an entry: read by log_entry_models_by_time within the range, which holds all the sums
 * need. Filters beyond the range keep the rows of the entries the list would give, found once (a
 * materialised CTE, whatever plan the statistics of the moment suggest); a model filter keeps the
 * entries that used that model, with all their models.
 */
export function modelCostsSql(filter: StatsFilter, range: HourRange, bind: Binder): string {
  const day = `c.started_at / ${dayMs}`;
  const where = [
    `c.workspace_id = ${bind.value("workspaceId", filter.workspaceId)}`,
    `c.started_at >= ${bind.value("startedFrom", range.start)}`,
    `c.started_at <= ${bind.value("startedTo", range.end - 1)}`,
  ];
  let kept = "";
  if (narrowsEntries(filter)) {
    const entries = filteredEntries(entriesIn(filter, range), bind);
    kept = `WITH kept AS MATERIALIZED (SELECT l.id FROM ${entries.from} WHERE ${entries.where.join(" AND ")}) `;
    where.push("c.log_id IN (SELECT id FROM kept)");
  }
  return `${kept}SELECT ${day} AS day, c.model AS model, CAST(sum(c.cost_nano_usd) AS bigint) AS cost_nano_usd,
      CAST(sum(c.tokens) AS bigint) AS tokens
    FROM log_entry_models c WHERE ${where.join(" AND ")}
    GROUP BY ${day}, c.model ORDER BY day, model`;
}

/**
 * The nearest-rank percentile of values in ascending order: the value at rank ceil(percent/100 * n).
 * n * percent is a whole number, so the division lands exactly on a whole rank or clear of one.
 */
function nearestRank(ascending: string[], percent: number): number {
  return Number(ascending[Math.ceil((ascending.length * percent) / 100) - 1]);
}

/** Whether the filter keeps fewer entries than the workspace's in the range. */
function narrowsEntries({ workspaceId: _, ...rest }: StatsFilter): boolean {
  return Object.values(rest).some((value) => value !== undefined);
}

/** The stats that the two queries' rows make: every hour of the range, and the costs in USD. */
export function statsOf(hourRows: HourRow[], costRows: ModelCostRow[], range: HourRange): LogStats {
  const counted = new Map(hourRows.map((row) => [Number(row.hour) * hourMs, row]));
  const hours: HourStatsRecord[] = [];
  for (let hour = range.start; hour < range.end; hour += hourMs) {
    const row = counted.get(hour);
    if (!row) {
      hours.push({ hour, executions: 0, errors: 0 });
      continue;
    }
    const durations = row.durations.split(",");
    hours.push({
      hour,
      executions: Number(row.executions),
      errors: Number(row.errors),
      p50DurationMs: nearestRank(durations, 50),
      p95DurationMs: nearestRank(durations, 95),
    });
  }
  return {
    hours,
    modelCosts: costRows.map((row) => ({
      day: Number(row.day) * dayMs,
      model: row.model,
      cost: Number(row.cost_nano_usd) / 1e9,
      tokens: Number(row.tokens),
    })),
  };
}
