import type { Limits } from "../../../gen/flowlog/logs/v1/limits_pb.js";
import type { GetLogStatsResponse } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import type { HourRange, LogStats } from "../../store/log-stats-sql.js";
import { isoDayFromMs, isoFromMs } from "../../util/time.js";

/**
 * The stats as GetLogStatsResponse shows them (issue 17): hours and range as D7 timestamps, days as
 * YYYY-MM-DD. Object literals of the generated types, as log-entry-view.ts builds its messages.
 */
export function logStatsView(stats: LogStats, range: HourRange, limits: Limits): GetLogStatsResponse {
  return {
    $typeName: "flowlog.logs.v1.GetLogStatsResponse",
    hours: stats.hours.map((h) => ({
      $typeName: "flowlog.logs.v1.HourStats",
      hour: isoFromMs(h.hour),
      executions: h.executions,
      errors: h.errors,
      p50DurationMs: h.p50DurationMs,
      p95DurationMs: h.p95DurationMs,
    })),
    modelCosts: stats.modelCosts.map((c) => ({
      $typeName: "flowlog.logs.v1.DayModelCost",
      day: isoDayFromMs(c.day),
      model: c.model,
      cost: c.cost,
      tokens: c.tokens,
    })),
    start: isoFromMs(range.start),
    end: isoFromMs(range.end),
    limits,
  };
}
