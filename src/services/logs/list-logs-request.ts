import type { ListLogsRequest } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { invalidArgument } from "../../errors/api-errors.js";
import type { LogFilter, Order, PageRequest } from "../../store/log-list-sql.js";
import { decodeCursor } from "./cursor.js";
import { listFilterOf } from "./entry-filter.js";

export const defaultPageSize = 100;

export interface ListLogsQuery {
  filter: LogFilter;
  page: PageRequest;
  details: "basic" | "full";
}

/**
 * GET /api/v1/logs as a store query (D8, D9). The values each parameter may take are declared in the
 * .proto and checked by the validation interceptor; what is left here needs more than the field itself:
 * dates on the calendar, a cursor this API issued for the same order, and the D26 list lengths, which are
 * configuration. All of these are collected, so a client fixes them in one round; nothing reaches the store
 * otherwise.
 */
export function parseListLogsRequest(request: ListLogsRequest, maxListValues: number): ListLogsQuery {
  const { filter, violations } = listFilterOf(request, maxListValues);
  const fail = (field: string, message: string) => violations.push({ field, message });

  const limit = request.limit ?? defaultPageSize;
  const order = (request.order ?? "desc") as Order;
  const details = (request.details ?? "basic") as ListLogsQuery["details"];
  let after: PageRequest["after"];
  if (request.cursor !== undefined) {
    const cursor = decodeCursor(request.cursor);
    if (!cursor.ok) fail("cursor", "cursor is not a nextCursor this API returned");
    else if (cursor.order !== order)
      fail("cursor", `cursor was issued for order=${cursor.order}, not order=${order}`);
    else after = cursor.key;
  }
  if (violations.length > 0) throw invalidArgument(violations);
  return {
    filter,
    details,
    page: {
      order,
      limit,
      after,
      withCostDetail: details === "full",
      withTraceSpans: request.includeTraceSpans ?? false,
      withFinalOutput: request.includeFinalOutput ?? false,
    },
  };
}
