import { costDetailColumns, type ListedRow, listedEntryFromRow, summaryColumns } from "./log-rows.js";
import type { Level, ListedEntryRecord, Trigger } from "./records.js";
import type { SearchTerm } from "./search-words.js";

/**
 * The log list in the store (D8, D9): what a list asks for (a filter and a page) and its SQL, written once
 * for both stores' dialects (Binder). The API request becomes this in services/logs/list-logs-request.ts.
 */

/** The filters of GET /api/v1/logs, already validated (D9, D10): the store trusts its values. */
export interface LogFilter {
  workspaceId: string;
  workflowIds?: string[];
  folderIds?: string[];
  triggers?: Trigger[];
  level?: Level;
  /** Inclusive bounds on startedAt (D9). */
  startedFrom?: number;
  startedTo?: number;
  executionId?: string;
  /** Any of these executions: DeleteLogs' other selection (D43); the list never sets it. */
  executionIds?: string[];
  minDurationMs?: number;
  maxDurationMs?: number;
  minCost?: number;
  maxCost?: number;
  model?: string;
  /** D45's `q`: entries whose indexed words hold every term (search-words.ts). Never empty. */
  search?: SearchTerm[];
}

export type Order = "asc" | "desc";

/** The key of the last row of a page (D8): pages continue strictly after it. */
export interface PageKey {
  startedAt: number;
  id: string;
}

export interface PageRequest {
  order: Order;
  limit: number;
  after?: PageKey;
  /** Read the cost's tokens and models only when the response shows them (details=full, D30). */
  withCostDetail: boolean;
  /** Read the heavy columns only when the response shows them (D9). */
  withTraceSpans: boolean;
  withFinalOutput: boolean;
}

export interface Page {
  entries: ListedEntryRecord[];
  /** Present when more rows follow the page. */
  next?: PageKey;
}

/** How one SQL dialect writes bound values: all that differs between the stores' list queries. */
export interface Binder {
  /** Binds `value` under `name` (once, however often the name is used) and returns its placeholder. */
  value(name: string, value: unknown): string;
  /**
   * The condition that `column` is one of `values`, bound as one value whatever their number, so the SQL
   * text does not depend on the list's length and no list meets a parameter cap (issue 11).
   */
  oneOf(column: string, name: string, values: string[]): string;
  /**
   * The condition that the entry `l` is indexed under every term (D45), in the store's full-text index:
   * the terms bound as one value of that index's query syntax, each word quoted, so nothing the client
   * typed is read as an operator.
   */
  holdsWords(name: string, terms: SearchTerm[]): string;
  /**
   * How the statement names log_entries (as `l`) when no model filter drives it: SQLite's store adds NOT
   * INDEXED when a search matches few entries, so that they drive the query (logs-store.ts).
   */
  entriesTable?: string;
  /**
   * The page's keys are read first, from the keyset index alone, and then its rows by id: PostgreSQL's
   * store asks for it when the search is a set of matches each candidate's key is checked against.
   */
  keysFirst?: boolean;
}

/** The log entries a filter selects (D9), in any store's dialect: what the list and the stats read. */
export interface FilteredEntries {
  /** log_entries as `l`; with a model filter, driven from that model's rows of log_entry_models as `m`. */
  from: string;
  where: string[];
  /** The driving table's keyset columns (D8), where the time bounds apply. */
  key: { startedAt: string; id: string };
}

/**
 * The FROM and WHERE of the filters present. With a model filter the rows are driven from
 * log_entry_models, whose key is already in keyset order; otherwise from log_entries, where the planner
 * picks the index whose prefix matches the equality filters. One value of a list stays an equality, so
 * the planner can walk the index led by that column.
 */
export function filteredEntries(filter: LogFilter, bind: Binder): FilteredEntries {
  const workspace = bind.value("workspaceId", filter.workspaceId);
  const where = [`l.workspace_id = ${workspace}`];
  let from = bind.entriesTable ?? "log_entries l";
  let key = { startedAt: "l.started_at", id: "l.id" };
  if (filter.model !== undefined) {
    from = "log_entry_models m JOIN log_entries l ON l.id = m.log_id";
    where.unshift(`m.workspace_id = ${workspace}`, `m.model = ${bind.value("model", filter.model)}`);
    key = { startedAt: "m.started_at", id: "m.log_id" };
  }
  const inList = (column: string, name: string, values: string[] | undefined) => {
    if (!values?.length) return;
    where.push(
      values.length === 1 ? `${column} = ${bind.value(name, values[0])}` : bind.oneOf(column, name, values),
    );
  };
  const compare = (column: string, operator: string, name: string, value: unknown) => {
    if (value !== undefined) where.push(`${column} ${operator} ${bind.value(name, value)}`);
  };
  inList("l.workflow_id", "workflow", filter.workflowIds);
  inList("l.folder_id", "folder", filter.folderIds);
  inList("l.trigger", "trigger", filter.triggers);
  inList("l.execution_id", "executionIds", filter.executionIds);
  compare("l.level", "=", "level", filter.level);
  compare(key.startedAt, ">=", "startedFrom", filter.startedFrom);
  compare(key.startedAt, "<=", "startedTo", filter.startedTo);
  compare("l.execution_id", "=", "executionId", filter.executionId);
  compare("l.total_duration_ms", ">=", "minDurationMs", filter.minDurationMs);
  compare("l.total_duration_ms", "<=", "maxDurationMs", filter.maxDurationMs);
  compare("l.cost_total", ">=", "minCost", filter.minCost);
  compare("l.cost_total", "<=", "maxCost", filter.maxCost);
  if (filter.search) where.push(bind.holdsWords("search", filter.search));
  return { from, where, key };
}

/**
 * The list query of GET /api/v1/logs for the filters present (D8, D9), in any store's dialect: the
 * filtered entries read in (started_at, id) order, which the index filteredEntries leads the planner to
 * gives without sorting. A statement cache holds one statement per combination of filters present,
 * whatever the values.
 */
export function listSql(filter: LogFilter, page: PageRequest, bind: Binder): string {
  const { from, where, key } = filteredEntries(impliedByCursor(filter, page), bind);
  if (page.after) {
    const after = `(${bind.value("afterStartedAt", page.after.startedAt)}, ${bind.value("afterId", page.after.id)})`;
    where.push(`(${key.startedAt}, ${key.id}) ${page.order === "asc" ? ">" : "<"} ${after}`);
  }
  const detail = [
    page.withCostDetail ? costDetailColumns : undefined,
    page.withTraceSpans ? "l.trace_spans_json, l.trace_spans_canonical" : undefined,
    page.withFinalOutput ? "l.final_output_json" : undefined,
  ].filter(Boolean);
  const direction = page.order === "asc" ? "ASC" : "DESC";
  const columns = [summaryColumns, ...detail].join(", ");
  const limit = bind.value("limit", page.limit + 1);
  if (bind.keysFirst) {
    const keys = `SELECT ${key.id} FROM ${from} WHERE ${where.join(" AND ")} ORDER BY ${key.startedAt} ${direction}, ${key.id} ${direction} LIMIT ${limit}`;
    return `SELECT ${columns} FROM log_entries l WHERE l.id IN (${keys}) ORDER BY l.started_at ${direction}, l.id ${direction}`;
  }
  return (
    `SELECT ${columns} FROM ${from} WHERE ${where.join(" AND ")} ` +
    `ORDER BY ${key.startedAt} ${direction}, ${key.id} ${direction} LIMIT ${limit}`
  );
}

/**
 * The filter less the date bound on the side a page continues from, when the page's cursor already lies
 * within it: `(started_at, id) < cursor` then implies `started_at <= startedTo` (desc; `>=` startedFrom asc).
 * SQLite's planner takes one of the two upper bounds for the index range, and took the date's: each page
 * after the first scanned from the end date down to its cursor, so paging (and an export) with an end date
 * slowed with every page, 3.7 s for the first 100,000 entries and 14.7 s for the third at 1M. A cursor
 * outside the bound (another query's) keeps it.
 */
function impliedByCursor(filter: LogFilter, page: PageRequest): LogFilter {
  const after = page.after;
  if (after === undefined) return filter;
  if (page.order === "desc" && filter.startedTo !== undefined && after.startedAt <= filter.startedTo)
    return { ...filter, startedTo: undefined };
  if (page.order === "asc" && filter.startedFrom !== undefined && after.startedAt >= filter.startedFrom)
    return { ...filter, startedFrom: undefined };
  return filter;
}

/**
 * The page that listSql's rows make: it reads one row more than the page, so a row beyond the limit
 * says there is a next page, which starts after the page's last entry.
 */
export function pageOf(rows: ListedRow[], limit: number): Page {
  const entries = rows.slice(0, limit).map(listedEntryFromRow);
  const last = entries[entries.length - 1];
  return rows.length > limit && last
    ? { entries, next: { startedAt: last.startedAt, id: last.id } }
    : { entries };
}
