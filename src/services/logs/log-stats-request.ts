import type { GetLogStatsRequest } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { invalidArgument } from "../../errors/api-errors.js";
import { dayMs, type HourRange, hourMs, type StatsFilter } from "../../store/log-stats-sql.js";
import { isoFromMs } from "../../util/time.js";
import { entryFilterOf, isoDate } from "./entry-filter.js";

/** The range when the request names no start: the last day, the current hour its last. */
const defaultRangeHours = 24;

export interface LogStatsQuery {
  filter: StatsFilter;
  range: HourRange;
}

export interface LogStatsLimits {
  /** D26's values per list parameter. */
  listParameterValues: number;
  /** The longest range, in days. */
  logStatsRangeDays: number;
}

/**
 * GET /api/v1/log-stats as a store query (issue 17): ListLogs' filters (D9), and a range of whole UTC
 * hours, from startDate rounded down to its hour to endDate rounded up to its hour (exclusive), endDate
 * now when absent and startDate 24 hours before the end. The range asked for may span at most
 * `logStatsRangeDays` days, which bounds the rows a request reads; the refusal names endDate and the
 * limit. Like the list, every violation is collected, so a client fixes them in one round.
 */
export function parseGetLogStatsRequest(
  request: GetLogStatsRequest,
  limits: LogStatsLimits,
  now: number,
): LogStatsQuery {
  const { filter, violations } = entryFilterOf(request, limits.listParameterValues);
  const fail = (field: string, message: string) => violations.push({ field, message });
  const from = isoDate(request.startDate, "startDate", fail);
  const to = isoDate(request.endDate, "endDate", fail) ?? now;
  const end = Math.ceil(to / hourMs) * hourMs;
  const start = from === undefined ? end - defaultRangeHours * hourMs : Math.floor(from / hourMs) * hourMs;
  if (violations.length === 0 && from !== undefined) {
    const endName = request.endDate === undefined ? "now (endDate is absent)" : `endDate ${isoFromMs(to)}`;
    if (from > to || start >= end) {
      fail("startDate", `startDate ${isoFromMs(from)} must be before ${endName}, so the range holds an hour`);
    } else if (to - from > limits.logStatsRangeDays * dayMs) {
      fail(
        "endDate",
        `endDate must be at most ${limits.logStatsRangeDays} days after startDate (D26): from startDate ` +
          `${isoFromMs(from)} to ${endName} is longer`,
      );
    }
  }
  if (violations.length > 0) throw invalidArgument(violations);
  return { filter, range: { start, end } };
}
