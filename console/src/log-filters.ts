import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ListLogsRequestSchema } from "../../gen/flowlog/logs/v1/logs_service_pb.js";

/**
 * The logs API's filters as URL parameters, so the logs and charts pages share a view's filters and a
 * link keeps them. One table: each filter's parameter, its request field, and how a value is read.
 */
export type LogFilterRequest = Omit<
  MessageInitShape<typeof ListLogsRequestSchema>,
  "$typeName" | "workspaceId" | "limit" | "cursor" | "order" | "details"
>;

type Kind = "list" | "text" | "integer" | "number";

export const logFilters = [
  { param: "workflows", field: "workflowIds", kind: "list", label: "Workflows" },
  { param: "folders", field: "folderIds", kind: "list", label: "Folders" },
  { param: "triggers", field: "triggers", kind: "list", label: "Triggers" },
  { param: "level", field: "level", kind: "text", label: "Level" },
  { param: "from", field: "startDate", kind: "text", label: "Started from" },
  { param: "to", field: "endDate", kind: "text", label: "Started before" },
  { param: "minMs", field: "minDurationMs", kind: "integer", label: "Min duration (ms)" },
  { param: "maxMs", field: "maxDurationMs", kind: "integer", label: "Max duration (ms)" },
  { param: "minCost", field: "minCost", kind: "number", label: "Min cost" },
  { param: "maxCost", field: "maxCost", kind: "number", label: "Max cost" },
  { param: "model", field: "model", kind: "text", label: "Model" },
  { param: "execution", field: "executionId", kind: "text", label: "Execution id" },
] as const satisfies readonly { param: string; field: keyof LogFilterRequest; kind: Kind; label: string }[];

export const triggers = ["api", "webhook", "schedule", "manual", "chat"] as const;

/** The levels a log entry has, as the filters and subscriptions offer them. */
export const levels = ["info", "error"] as const;

/**
 * The request fields the URL's parameters set. A value the API would refuse (a bad date, a negative
 * cost) is passed as typed, so the API's own error names the field.
 */
export function filtersFromParams(params: URLSearchParams): LogFilterRequest {
  const request: Record<string, unknown> = {};
  for (const { param, field, kind } of logFilters) {
    const raw = params.get(param);
    if (!raw) continue;
    if (kind === "list") request[field] = raw.split(",").filter(Boolean);
    else if (kind === "integer") request[field] = Number.parseInt(raw, 10);
    else if (kind === "number") request[field] = Number(raw);
    else request[field] = raw;
  }
  return request as LogFilterRequest;
}

/** The filter parameters of a view, for links that keep them (the other page, the next page). */
export function filterParams(params: URLSearchParams): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const { param } of logFilters) {
    const value = params.get(param);
    if (value) kept[param] = value;
  }
  return kept;
}

/** `<input type="datetime-local">` speaks local time without a zone; the API takes ISO 8601 (D9). */
export function localInputToIso(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

export function isoToLocalInput(iso: string | null): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}
