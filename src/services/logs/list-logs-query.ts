import type { ListLogsRequest } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { type FieldViolation, invalidArgument, listLengthViolations } from "../../errors/api-errors.js";
import type { LogFilter, Order, PageRequest } from "../../store/logs-store.js";
import type { Level, Trigger } from "../../store/records.js";
import { msFromIso } from "../../util/time.js";
import { decodeCursor } from "./cursor.js";

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
  const violations: FieldViolation[] = [
    ...listLengthViolations("workflowIds", request.workflowIds, maxListValues),
    ...listLengthViolations("folderIds", request.folderIds, maxListValues),
    ...listLengthViolations("triggers", request.triggers, maxListValues),
  ];
  const fail = (field: string, message: string) => violations.push({ field, message });

  const limit = request.limit ?? defaultPageSize;
  const order = (request.order ?? "desc") as Order;
  const details = (request.details ?? "basic") as ListLogsQuery["details"];
  const startedFrom = isoBound(request.startDate, "startDate", fail);
  const startedTo = isoBound(request.endDate, "endDate", fail);
  let after: PageRequest["after"];
  if (request.cursor !== undefined) {
    const cursor = decodeCursor(request.cursor);
    if (!cursor.ok) fail("cursor", "cursor is not a nextCursor this API returned");
    else if (cursor.order !== order)
      fail("cursor", `cursor was issued for order=${cursor.order}, not order=${order}`);
    else after = cursor.key;
  }
  if (violations.length > 0) throw invalidArgument(violations);

  const filter: LogFilter = {
    workspaceId: request.workspaceId,
    workflowIds: request.workflowIds.length > 0 ? request.workflowIds : undefined,
    folderIds: request.folderIds.length > 0 ? request.folderIds : undefined,
    triggers: request.triggers.length > 0 ? (request.triggers as Trigger[]) : undefined,
    level: request.level as Level | undefined,
    startedFrom,
    startedTo,
    executionId: request.executionId,
    minDurationMs: request.minDurationMs,
    maxDurationMs: request.maxDurationMs,
    minCost: request.minCost,
    maxCost: request.maxCost,
    model: request.model,
  };
  return {
    filter,
    details,
    page: {
      order,
      limit,
      after,
      withTraceSpans: request.includeTraceSpans ?? false,
      withFinalOutput: request.includeFinalOutput ?? false,
    },
  };
}

function isoBound(value: string | undefined, field: string, fail: (field: string, message: string) => void) {
  if (value === undefined) return undefined;
  const ms = msFromIso(value);
  if (ms === undefined)
    fail(field, `${field} must be an ISO 8601 timestamp such as 2026-01-02T03:04:05.000Z`);
  return ms;
}
