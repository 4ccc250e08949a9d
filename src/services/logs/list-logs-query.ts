import type { ListLogsRequest } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { type FieldViolation, invalidArgument, listLengthViolations } from "../../errors/api-errors.js";
import type { LogFilter, Order, PageRequest } from "../../store/logs-store.js";
import { type Level, levels, type Trigger, triggers } from "../../store/records.js";
import { msFromIso } from "../../util/time.js";
import { decodeCursor } from "./cursor.js";

export const defaultPageSize = 100;
export const maxPageSize = 1000;

export interface ListLogsQuery {
  filter: LogFilter;
  page: PageRequest;
  details: "basic" | "full";
}

/**
 * Validates every parameter of GET /api/v1/logs before anything reaches the store (D8, D9, D10),
 * collecting all violations so a client fixes its request in one round. Each list holds at most
 * `maxListValues` values (D26).
 */
export function parseListLogsRequest(request: ListLogsRequest, maxListValues: number): ListLogsQuery {
  const violations: FieldViolation[] = [
    ...listLengthViolations("workflowIds", request.workflowIds, maxListValues),
    ...listLengthViolations("folderIds", request.folderIds, maxListValues),
    ...listLengthViolations("triggers", request.triggers, maxListValues),
  ];
  const fail = (field: string, message: string) => violations.push({ field, message });

  const limit = request.limit ?? defaultPageSize;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxPageSize) {
    fail("limit", `limit must be an integer from 1 to ${maxPageSize}`);
  }
  const order = oneOf(request.order ?? "desc", ["asc", "desc"] as const, "order", fail);
  const details = oneOf(request.details ?? "basic", ["basic", "full"] as const, "details", fail);
  const level = request.level === undefined ? undefined : oneOf(request.level, levels, "level", fail);
  const triggerList = request.triggers.map((t) => oneOf(t, triggers, "triggers", fail));
  const startedFrom = isoBound(request.startDate, "startDate", fail);
  const startedTo = isoBound(request.endDate, "endDate", fail);
  for (const [field, value] of [
    ["minCost", request.minCost],
    ["maxCost", request.maxCost],
  ] as const) {
    if (value !== undefined && (!Number.isFinite(value) || value < 0))
      fail(field, `${field} must be a number of at least 0`);
  }
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
    triggers: triggerList.length > 0 ? (triggerList as Trigger[]) : undefined,
    level: level as Level | undefined,
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
    details: details as "basic" | "full",
    page: {
      order: order as Order,
      limit,
      after,
      withTraceSpans: request.includeTraceSpans ?? false,
      withFinalOutput: request.includeFinalOutput ?? false,
    },
  };
}

function oneOf<T extends string>(
  value: string,
  allowed: readonly T[],
  field: string,
  fail: (field: string, message: string) => void,
): T | undefined {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  fail(
    field,
    `${field} must be ${allowed.length === 2 ? allowed.join(" or ") : `one of ${allowed.join(", ")}`}, not "${value}"`,
  );
  return undefined;
}

function isoBound(value: string | undefined, field: string, fail: (field: string, message: string) => void) {
  if (value === undefined) return undefined;
  const ms = msFromIso(value);
  if (ms === undefined)
    fail(field, `${field} must be an ISO 8601 timestamp such as 2026-01-02T03:04:05.000Z`);
  return ms;
}
