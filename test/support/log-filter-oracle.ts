import type { LogEntryRecord } from "../../src/store/records.js";

/**
 * The oracle of the list filters: the spec's filter semantics written out plainly over raw rows (D8, D9),
 * for the tests that compare a walk of every page (through the API, or straight from either store) with
 * what it must give. Named as the API's query parameters; times are Unix milliseconds.
 */
export interface Filter {
  workflowIds?: string[];
  folderIds?: string[];
  triggers?: string[];
  level?: string;
  startDate?: number;
  endDate?: number;
  executionId?: string;
  minDurationMs?: number;
  maxDurationMs?: number;
  minCost?: number;
  maxCost?: number;
  model?: string;
}

export function matches(entry: LogEntryRecord, f: Filter): boolean {
  return (
    (!f.workflowIds || f.workflowIds.includes(entry.workflowId)) &&
    (!f.folderIds || (entry.folderId !== null && f.folderIds.includes(entry.folderId))) &&
    (!f.triggers || f.triggers.includes(entry.trigger)) &&
    (f.level === undefined || entry.level === f.level) &&
    (f.startDate === undefined || entry.startedAt >= f.startDate) &&
    (f.endDate === undefined || entry.startedAt <= f.endDate) &&
    (f.executionId === undefined || entry.executionId === f.executionId) &&
    (f.minDurationMs === undefined || entry.totalDurationMs >= f.minDurationMs) &&
    (f.maxDurationMs === undefined || entry.totalDurationMs <= f.maxDurationMs) &&
    (f.minCost === undefined || entry.cost.total >= f.minCost) &&
    (f.maxCost === undefined || entry.cost.total <= f.maxCost) &&
    (f.model === undefined || f.model in entry.cost.models)
  );
}

/** The keyset order, (startedAt, id), ids compared by their bytes as both stores compare them. */
export function keysetOrder(order: "asc" | "desc") {
  const sign = order === "asc" ? 1 : -1;
  return (a: LogEntryRecord, b: LogEntryRecord) =>
    sign * (a.startedAt - b.startedAt || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)));
}
