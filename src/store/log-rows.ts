import { sha256 } from "../util/sha256.js";
import type { CostRecord, ExecutionRecord, Level, LogEntryRecord, Trigger } from "./records.js";

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
  files_json: string | null;
  trace_spans_json?: string;
  final_output_json?: string | null;
}

/** Every column of log_entries but the heavy JSON ones, from the table aliased `l`. */
export const lightColumns =
  "l.id, l.workspace_id, l.workflow_id, l.folder_id, l.execution_id, l.billed_user_id, l.level, l.trigger, " +
  "l.started_at, l.ended_at, l.total_duration_ms, l.cost_total, l.cost_json, l.files_json";

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
    filesJson: string | null;
    traceSpansJson: string;
    finalOutputJson: string | null;
  };
  /** The models the execution used, for the model filter and the stats' cost per model (log_entry_models). */
  models: ModelRow[];
  /** Shared by the executions of one workflow version; stored once (stateKeys). */
  workflowState: unknown;
}

/** One model of an execution as log_entry_models keeps it: its cost in whole nano-USD (D30), exactly summed. */
export interface ModelRow {
  model: string;
  costNanoUsd: number;
  tokens: number;
}

export function executionRows({ entry, workflowState }: ExecutionRecord): ExecutionRows {
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
      costTotal: entry.cost.total,
      costJson: JSON.stringify({ tokens: entry.cost.tokens, models: entry.cost.models }),
      filesJson: entry.files == null ? null : JSON.stringify(entry.files),
      traceSpansJson: JSON.stringify(entry.traceSpans),
      finalOutputJson: entry.finalOutput === undefined ? null : JSON.stringify(entry.finalOutput),
    },
    models: Object.entries(entry.cost.models).map(([model, cost]) => ({
      model,
      costNanoUsd: Math.round(cost.total * 1e9),
      tokens: cost.tokens.total,
    })),
    workflowState,
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

export function logEntryFromRow(row: LogRow): LogEntryRecord {
  const cost = JSON.parse(row.cost_json) as Omit<CostRecord, "total">;
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
    cost: { total: row.cost_total, ...cost },
    files: row.files_json === null ? null : JSON.parse(row.files_json),
    traceSpans: row.trace_spans_json === undefined ? [] : JSON.parse(row.trace_spans_json),
    finalOutput: row.final_output_json == null ? undefined : JSON.parse(row.final_output_json),
  };
}
