import {
  isCanonicalCostJson,
  isCanonicalTraceSpanList,
} from "../../gen/flowlog/logs/v1/logs_service_serializers.js";
import { sha256 } from "../util/sha256.js";
import type {
  CostRecord,
  CostTotalRecord,
  ExecutionRecord,
  Level,
  ListedEntryRecord,
  LogEntryRecord,
  RetryLinks,
  StoredCostRecord,
  Trigger,
  ViewedEntryRecord,
  WorkflowSummaryRecord,
} from "./records.js";
import { entryTexts, indexedWords } from "./search-words.js";

/**
 * An execution as the rows it becomes and a log_entries row as the record it was: the same in every
 * store (SQLite and PostgreSQL keep the same columns, D32), so each store only runs the statements.
 */

/** A log_entries row as read; the heavy columns only when the query asked for them (D9). */
export interface LogRow {
  id: string;
  workspace_id: string;
  workflow_id: string;
  folder_id: string | null;
  execution_id: string;
  billed_user_id: string | null;
  level: Level;
  trigger: Trigger;
  started_at: number;
  ended_at: number;
  total_duration_ms: number;
  cost_total: number;
  cost_json: string;
  /** Read with cost_json by the statements that hand a canonical cost on unparsed (issue 53). */
  cost_canonical?: number;
  files_json: string | null;
  trace_spans_json?: string;
  /** Read with trace_spans_json by the statements that hand canonical spans on unparsed (issue 13). */
  trace_spans_canonical?: number;
  final_output_json?: string | null;
}

/** A row of a page of the list: the cost's detail only when the page shows it (D30). */
export type ListedRow = Omit<LogRow, "cost_json"> & { cost_json?: string };

/** The columns of a cost's detail, read together: its stored text and whether that is canonical. */
export const costDetailColumns = "l.cost_json, l.cost_canonical";

/** The columns every page of the list reads, from log_entries aliased `l`: no cost detail, no heavy JSON. */
export const summaryColumns =
  "l.id, l.workspace_id, l.workflow_id, l.folder_id, l.execution_id, l.billed_user_id, l.level, l.trigger, " +
  "l.started_at, l.ended_at, l.total_duration_ms, l.cost_total, l.files_json";

/** Every column of log_entries but the heavy JSON ones. */
export const lightColumns = `${summaryColumns}, ${costDetailColumns}`;

/**
 * An execution as the rows it becomes, its JSON columns already written out: what a bulk load holds
 * between making an execution and writing its batch, strings rather than the object graphs they came
 * from, so that a batch of thousands costs the garbage collector little (the seeder, issue 14).
 */
export interface ExecutionRows {
  /** The entry's scalar columns as they are, its object-valued ones as JSON. */
  entry: Omit<LogEntryRecord, "cost" | "files" | "traceSpans" | "finalOutput"> & {
    costTotal: number;
    costJson: string;
    /** 1 when costJson, the total written first, is exactly the cost's canonical protobuf JSON (isCanonicalCostJson). */
    costCanonical: 0 | 1;
    filesJson: string | null;
    traceSpansJson: string;
    /** 1 when traceSpansJson is exactly the spans' canonical protobuf JSON (isCanonicalTraceSpanList). */
    traceSpansCanonical: 0 | 1;
    finalOutputJson: string | null;
  };
  /** The models the execution used, for the model filter and the stats' cost per model (log_entry_models). */
  models: ModelRow[];
  /** Shared by the executions of one workflow version; stored once (stateKeys). */
  workflowState: unknown;
  /** The version that state is (D47), beside the execution's link to it. */
  workflowVersion: number | null;
  /**
   * The words of its block names, errors and final output (D45): what it is found by, with its workflow's
   * name, which the store adds (entryWords).
   */
  contentWords: string[];
}

/** One model of an execution as log_entry_models keeps it: its cost in whole nano-USD (D30), exactly summed. */
export interface ModelRow {
  model: string;
  costNanoUsd: number;
  tokens: number;
}

export function executionRows({ entry, workflowState, workflowVersion }: ExecutionRecord): ExecutionRows {
  const traceSpansJson = JSON.stringify(entry.traceSpans);
  const { total, tokens, models } = entry.cost;
  return {
    entry: {
      id: entry.id,
      workspaceId: entry.workspaceId,
      workflowId: entry.workflowId,
      folderId: entry.folderId,
      executionId: entry.executionId,
      billedUserId: entry.billedUserId,
      level: entry.level,
      trigger: entry.trigger,
      startedAt: entry.startedAt,
      endedAt: entry.endedAt,
      totalDurationMs: entry.totalDurationMs,
      costTotal: total,
      costJson: JSON.stringify({ tokens, models }),
      // Checked on what is stored, the total first as the answers splice it (shownCost).
      costCanonical: isCanonicalCostJson({ total, tokens, models }) ? 1 : 0,
      filesJson: entry.files == null ? null : JSON.stringify(entry.files),
      traceSpansJson,
      // Checked on the spans themselves: what JSON.stringify writes of them otherwise is refused.
      traceSpansCanonical: isCanonicalTraceSpanList(entry.traceSpans) ? 1 : 0,
      finalOutputJson: entry.finalOutput === undefined ? null : JSON.stringify(entry.finalOutput),
    },
    models: Object.entries(models).map(([model, cost]) => ({
      model,
      costNanoUsd: Math.round(cost.total * 1e9),
      tokens: cost.tokens.total,
    })),
    workflowState,
    workflowVersion: workflowVersion ?? null,
    contentWords: indexedWords(entryTexts(entry.traceSpans, entry.finalOutput)),
  };
}

/**
 * The keys of a batch's workflow states (issue 15): each distinct state is stored once, under the
 * SHA-256 of its JSON, and each distinct state object of a batch is serialised and hashed once;
 * `onNew` is told each one the first time, to store it.
 */
export function stateKeys(onNew: (key: Buffer, json: string) => void): (workflowState: unknown) => Buffer {
  const known = new Map<unknown, Buffer>();
  return (workflowState) => {
    let key = known.get(workflowState);
    if (key === undefined) {
      const json = JSON.stringify(workflowState);
      key = sha256(json);
      onNew(key, json);
      known.set(workflowState, key);
    }
    return key;
  };
}

/** A row of an execution's read: its entry's light columns, its snapshot and the version it is (D47). */
export type ExecutionRow = LogRow & { workflow_state_json: string; workflow_version: number | null };

export function executionFromRow(row: ExecutionRow): ExecutionRecord {
  return {
    entry: logEntryFromRow(row),
    workflowState: JSON.parse(row.workflow_state_json),
    workflowVersion: row.workflow_version,
  };
}

/**
 * D47: the execution a retry retries, and the newest retry of an execution, in one statement; `key` is the
 * execution id's parameter in the store's dialect.
 */
export function retryLinksSql(key: string): string {
  return `SELECT
    (SELECT retry_of FROM execution_retries WHERE execution_id = ${key}) AS retry_of,
    (SELECT execution_id FROM execution_retries WHERE retry_of = ${key}
      ORDER BY created_at DESC, execution_id DESC LIMIT 1) AS retried_by`;
}

export interface RetryLinksRow {
  retry_of: string | null;
  retried_by: string | null;
}

export function retryLinksFromRow(row: RetryLinksRow): RetryLinks {
  return {
    ...(row.retry_of === null ? {} : { retryOf: row.retry_of }),
    ...(row.retried_by === null ? {} : { retriedBy: row.retried_by }),
  };
}

export function logEntryFromRow(row: LogRow): LogEntryRecord {
  return entryFromRow(row, costFromColumns(row.cost_total, row.cost_json), spansOf(row));
}

/**
 * One entry by id, heavy columns included, with its workflow's name and description joined in: what
 * GET /api/v1/logs/{id} shows, in one statement (issue 13). Deleted workflows are still joined (D17).
 * `?` is the id: PostgreSQL's store writes it as `$1`.
 */
export const entryViewSql = `SELECT ${lightColumns}, l.trace_spans_json, l.trace_spans_canonical,
    l.final_output_json, w.name AS workflow_name, w.description AS workflow_description
  FROM log_entries l LEFT JOIN workflows w ON w.id = l.workflow_id WHERE l.id = ?`;

/** A row of entryViewSql. */
export type EntryViewRow = LogRow & { trace_spans_json: string; trace_spans_canonical: number } & (
    | { workflow_name: string; workflow_description: string }
    | { workflow_name: null; workflow_description: null }
  );

/** An entry as the logs API shows it alone: with its workflow's summary, when the workflow is known. */
export interface EntryView {
  entry: ViewedEntryRecord;
  workflow?: WorkflowSummaryRecord;
}

export function entryViewFromRow(row: EntryViewRow): EntryView {
  // Spans stored as their canonical text are handed on unparsed: parsing them was most of an answer's cost.
  const entry: ViewedEntryRecord = shownEntryFromRow(
    row,
    shownCost(row.cost_total, row.cost_json, row.cost_canonical),
    row.trace_spans_canonical === 1 ? { canonicalJson: row.trace_spans_json } : spansOf(row),
  );
  if (row.workflow_name === null) return { entry };
  return {
    entry,
    workflow: { id: row.workflow_id, name: row.workflow_name, description: row.workflow_description },
  };
}

/**
 * A page's row as its entry: the cost's total only when the page did not read its detail; the cost and the
 * spans, when it read them, as their stored text when that is canonical, as one entry's are
 * (entryViewFromRow).
 */
export function listedEntryFromRow(row: ListedRow): ListedEntryRecord {
  return shownEntryFromRow(
    row,
    row.cost_json === undefined
      ? { total: row.cost_total }
      : shownCost(row.cost_total, row.cost_json, row.cost_canonical),
    row.trace_spans_canonical === 1 && row.trace_spans_json !== undefined
      ? { canonicalJson: row.trace_spans_json }
      : spansOf(row),
  );
}

/** A cost with its detail, which a page reads only when asked (PageRequest.withCostDetail). */
export function costDetail(
  cost: CostRecord | CostTotalRecord | StoredCostRecord,
): CostRecord | StoredCostRecord {
  if (!("models" in cost || "detailJson" in cost))
    throw new Error("the entry's cost detail was not read (withCostDetail)");
  return cost;
}

function costFromColumns(total: number, json: string): CostRecord {
  return { total, ...(JSON.parse(json) as Omit<CostRecord, "total">) };
}

/** A cost the answers show: its stored text as it is when canonical, as the entry was written (executionRows). */
function shownCost(
  total: number,
  json: string,
  canonical: number | undefined,
): CostRecord | StoredCostRecord {
  return canonical === 1 ? { total, detailJson: json } : costFromColumns(total, json);
}

/** The stored trace spans, parsed; none when the query did not read them. */
function spansOf(row: ListedRow): unknown[] {
  return row.trace_spans_json === undefined ? [] : JSON.parse(row.trace_spans_json);
}

function entryFromRow<Cost, Spans>(
  row: ListedRow,
  cost: Cost,
  traceSpans: Spans,
): Omit<LogEntryRecord, "cost" | "traceSpans"> & { cost: Cost; traceSpans: Spans } {
  const { filesJson, finalOutputJson, ...entry } = shownEntryFromRow(row, cost, traceSpans);
  return {
    ...entry,
    files: filesJson === null ? null : JSON.parse(filesJson),
    finalOutput: finalOutputJson === undefined ? undefined : JSON.parse(finalOutputJson),
  };
}

/**
 * An entry as the answers show it: its files and final output as their stored text (StoredJsonTexts). One
 * object literal of one shape: an export builds one per entry, and building it by spreading the columns
 * into it made a 1M export a third slower (lab, 2026-12-03).
 */
function shownEntryFromRow<Cost, Spans>(row: ListedRow, cost: Cost, traceSpans: Spans) {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    workflowId: row.workflow_id,
    folderId: row.folder_id,
    executionId: row.execution_id,
    billedUserId: row.billed_user_id,
    level: row.level,
    trigger: row.trigger,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    totalDurationMs: row.total_duration_ms,
    cost,
    filesJson: row.files_json,
    traceSpans,
    finalOutputJson: row.final_output_json ?? undefined,
  };
}

/**
 * Reads rows that SQLite gave as arrays of `columns` (better-sqlite3's raw mode) as ListedRows. Building
 * the objects here costs a 100-entry page a few µs; better-sqlite3 building them costs 160 µs more than
 * the arrays (issue 13, measured: 360 against 200 µs for the page's statement).
 */
export function listedRowReader(columns: string[]): (values: unknown[]) => ListedRow {
  const at = (name: keyof LogRow) => columns.indexOf(name);
  const required = (name: keyof LogRow) => {
    const index = at(name);
    if (index < 0) throw new Error(`a page's statement must read log_entries.${name}`);
    return index;
  };
  const id = required("id");
  const workspace = required("workspace_id");
  const workflow = required("workflow_id");
  const folder = required("folder_id");
  const execution = required("execution_id");
  const billedUser = required("billed_user_id");
  const level = required("level");
  const trigger = required("trigger");
  const startedAt = required("started_at");
  const endedAt = required("ended_at");
  const duration = required("total_duration_ms");
  const costTotal = required("cost_total");
  const files = required("files_json");
  const costJson = at("cost_json");
  const costCanonical = at("cost_canonical");
  const traceSpans = at("trace_spans_json");
  const canonical = at("trace_spans_canonical");
  const finalOutput = at("final_output_json");
  return (v) => ({
    id: v[id] as string,
    workspace_id: v[workspace] as string,
    workflow_id: v[workflow] as string,
    folder_id: v[folder] as string | null,
    execution_id: v[execution] as string,
    billed_user_id: v[billedUser] as string | null,
    level: v[level] as Level,
    trigger: v[trigger] as Trigger,
    started_at: v[startedAt] as number,
    ended_at: v[endedAt] as number,
    total_duration_ms: v[duration] as number,
    cost_total: v[costTotal] as number,
    files_json: v[files] as string | null,
    cost_json: costJson < 0 ? undefined : (v[costJson] as string),
    cost_canonical: costCanonical < 0 ? undefined : (v[costCanonical] as number),
    trace_spans_json: traceSpans < 0 ? undefined : (v[traceSpans] as string),
    trace_spans_canonical: canonical < 0 ? undefined : (v[canonical] as number),
    final_output_json: finalOutput < 0 ? undefined : (v[finalOutput] as string | null),
  });
}
