import type { DeleteLogsRequest } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { invalidArgument, listLengthViolations } from "../../errors/api-errors.js";
import type { LogFilter } from "../../store/log-list-sql.js";
import { entryFilterOf, isoDate } from "./entry-filter.js";

export interface DeleteLogsQuery {
  filter: LogFilter;
  preview: boolean;
  /** What the audit line says was asked (D43): the filters as given, or how many executions. */
  selection: Record<string, unknown>;
}

/**
 * DeleteLogs' request as a store selection (D43): the executions named, or ListLogs' filters, read and
 * checked as the list reads them (entry-filter.ts), so the same field gets the same error. Either one,
 * never both, and never neither: a request that names nothing does not delete a whole workspace.
 */
export function parseDeleteLogsRequest(request: DeleteLogsRequest, maxListValues: number): DeleteLogsQuery {
  const { filter: entries, violations } = entryFilterOf(request, maxListValues);
  const fail = (field: string, message: string) => violations.push({ field, message });
  violations.push(...listLengthViolations("executionIds", request.executionIds, maxListValues));
  const startedFrom = isoDate(request.startDate, "startDate", fail);
  const startedTo = isoDate(request.endDate, "endDate", fail);
  const filter: LogFilter = { ...entries, startedFrom, startedTo };
  const given = Object.entries(filter).filter(
    ([name, value]) => name !== "workspaceId" && value !== undefined,
  );
  const byExecution = request.executionIds.length > 0;
  if (byExecution && given.length > 0) {
    fail(
      "executionIds",
      `executionIds cannot be combined with filters (${given.map(([name]) => filterField(name)).join(", ")})`,
    );
  } else if (!byExecution && given.length === 0 && request.q === undefined) {
    fail(
      "executionIds",
      "executionIds or at least one filter is required (an endDate alone deletes everything before it)",
    );
  }
  if (violations.length > 0) throw invalidArgument(violations);
  return byExecution
    ? {
        filter: { workspaceId: request.workspaceId, executionIds: request.executionIds },
        preview: request.preview,
        selection: { executionIds: request.executionIds.length },
      }
    : { filter, preview: request.preview, selection: requestFilters(request) };
}

/** The request's name of a store filter field, for the message that names it. */
function filterField(name: string): string {
  return (
    ({ startedFrom: "startDate", startedTo: "endDate", search: "q" } as Record<string, string>)[name] ?? name
  );
}

function requestFilters(request: DeleteLogsRequest): Record<string, unknown> {
  const { workflowIds, folderIds, triggers, level, startDate, endDate, minDurationMs, maxDurationMs } =
    request;
  const { minCost, maxCost, model, q } = request;
  const all = {
    workflowIds,
    folderIds,
    triggers,
    level,
    startDate,
    endDate,
    minDurationMs,
    maxDurationMs,
    minCost,
    maxCost,
    model,
    q,
  };
  return Object.fromEntries(
    Object.entries(all).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0)),
  );
}
