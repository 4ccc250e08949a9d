import { type Db, sha256 } from "./database.js";
import type { FanOutIntent } from "./outbox-store.js";
import type { CostRecord, ExecutionRecord, Level, LogEntryRecord, Trigger } from "./records.js";

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
  minDurationMs?: number;
  maxDurationMs?: number;
  minCost?: number;
  maxCost?: number;
  model?: string;
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
  /** Read the heavy columns only when the response shows them (D9). */
  withTraceSpans: boolean;
  withFinalOutput: boolean;
}

export interface Page {
  entries: LogEntryRecord[];
  /** Present when more rows follow the page. */
  next?: PageKey;
}

interface LogRow {
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

const lightColumns =
  "l.id, l.workspace_id, l.workflow_id, l.folder_id, l.execution_id, l.billed_user_id, l.level, l.trigger, " +
  "l.started_at, l.ended_at, l.total_duration_ms, l.cost_total, l.cost_json, l.files_json";

/** One log entry by id, heavy columns included (GET /api/v1/logs/{id}). */
export const entryByIdSql = `SELECT ${lightColumns}, l.trace_spans_json, l.final_output_json FROM log_entries l WHERE l.id = ?`;

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
  /** The models the execution used, for the model filter's table. */
  models: string[];
  /** Shared by the executions of one workflow version; stored once (stateKey). */
  workflowState: unknown;
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
    models: Object.keys(entry.cost.models),
    workflowState,
  };
}

/**
 * Log entries and execution snapshots (D17, D23). Every statement is prepared once; the list query is
 * built from the filters present so that SQLite can walk one index in keyset order (D8), and its shapes
 * are bounded by those combinations, whatever the values (listQuery).
 */
export class LogsStore {
  private readonly insertEntry;
  private readonly insertModel;
  private readonly insertState;
  private readonly insertExecutionState;
  private readonly insertFanOut;
  private readonly byId;
  private readonly byExecution;
  private readonly listCache = new Map<string, ReturnType<Db["prepare"]>>();

  constructor(private readonly db: Db) {
    this.insertEntry = db.prepare(
      `INSERT INTO log_entries (id, workspace_id, workflow_id, folder_id, execution_id, billed_user_id, level,
         trigger, started_at, ended_at, total_duration_ms, cost_total, cost_json, files_json, trace_spans_json,
         final_output_json)
       VALUES (@id, @workspaceId, @workflowId, @folderId, @executionId, @billedUserId, @level, @trigger, @startedAt,
         @endedAt, @totalDurationMs, @costTotal, @costJson, @filesJson, @traceSpansJson, @finalOutputJson)
       ON CONFLICT (execution_id) DO NOTHING`,
    );
    this.insertModel = db.prepare(
      "INSERT OR IGNORE INTO log_entry_models (workspace_id, model, started_at, log_id) VALUES (?, ?, ?, ?)",
    );
    this.insertState = db.prepare(
      "INSERT OR IGNORE INTO workflow_states (hash, workflow_state_json) VALUES (?, ?)",
    );
    this.insertExecutionState = db.prepare(
      "INSERT OR IGNORE INTO execution_states (execution_id, state_hash) VALUES (?, ?)",
    );
    this.insertFanOut = db.prepare(
      `INSERT OR IGNORE INTO notification_outbox (log_id, workspace_id, workflow_id, task_queue, created_at, not_before)
       VALUES (@logId, @workspaceId, @workflowId, @taskQueue, @now, @now)`,
    );
    this.byId = db.prepare(entryByIdSql);
    this.byExecution = db.prepare(
      `SELECT ${lightColumns}, s.workflow_state_json FROM log_entries l
       JOIN execution_states e ON e.execution_id = l.execution_id
       JOIN workflow_states s ON s.hash = e.state_hash WHERE l.execution_id = ?`,
    );
  }

  /**
   * Writes an execution's log entry and snapshot in one transaction. Idempotent on the execution id, so
   * a retried write (a Temporal activity retry) never duplicates (D17). Returns whether it was new. A
   * `fanOut` goes into the notification outbox in the same transaction, with a new entry only: the
   * entry and its notifications exist together or not at all (issue 12).
   */
  insertExecution(record: ExecutionRecord, fanOut?: FanOutIntent): boolean {
    return this.db.transaction(() => {
      const inserted = this.insertOne(executionRows(record), new Map());
      if (inserted && fanOut) this.insertFanOut.run({ ...fanOut, now: Date.now() });
      return inserted;
    })();
  }

  /** Many executions per transaction, for bulk loads: see insertRows. */
  insertExecutions(records: ExecutionRecord[]): number {
    return this.insertRows(records.map(executionRows));
  }

  /**
   * Executions already serialised (executionRows), many per transaction, for bulk loads (seed): one fsync
   * per batch, not per row, and each distinct workflow state object serialised and hashed once per batch.
   */
  insertRows(rows: ExecutionRows[]): number {
    const stateKeys = new Map<unknown, Buffer>();
    return this.db.transaction(() => rows.filter((r) => this.insertOne(r, stateKeys)).length)();
  }

  private insertOne(
    { entry, models, workflowState }: ExecutionRows,
    stateKeys: Map<unknown, Buffer>,
  ): boolean {
    if (this.insertEntry.run(entry).changes === 0) return false;
    for (const model of models) this.insertModel.run(entry.workspaceId, model, entry.startedAt, entry.id);
    this.insertExecutionState.run(entry.executionId, this.stateKey(workflowState, stateKeys));
    return true;
  }

  /** The snapshot's key (issue 15): each distinct state is stored once, under the SHA-256 of its JSON. */
  private stateKey(workflowState: unknown, known: Map<unknown, Buffer>): Buffer {
    let key = known.get(workflowState);
    if (key === undefined) {
      const json = JSON.stringify(workflowState);
      key = sha256(json);
      this.insertState.run(key, json);
      known.set(workflowState, key);
    }
    return key;
  }

  getEntry(id: string): LogEntryRecord | undefined {
    const row = this.byId.get(id) as LogRow | undefined;
    return row && toRecord(row);
  }

  getExecution(executionId: string): ExecutionRecord | undefined {
    const row = this.byExecution.get(executionId) as (LogRow & { workflow_state_json: string }) | undefined;
    return row && { entry: toRecord(row), workflowState: JSON.parse(row.workflow_state_json) };
  }

  list(filter: LogFilter, page: PageRequest): Page {
    const { sql, params } = listQuery(filter, page);
    let statement = this.listCache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.listCache.set(sql, statement);
    }
    const rows = statement.all(params) as LogRow[];
    const entries = rows.slice(0, page.limit).map(toRecord);
    const last = entries[entries.length - 1];
    return rows.length > page.limit && last
      ? { entries, next: { startedAt: last.startedAt, id: last.id } }
      : { entries };
  }

  /** The plan of the list query, for tests that hold the indexes to their promise. */
  explainList(filter: LogFilter, page: PageRequest): string[] {
    const { sql, params } = listQuery(filter, page);
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map(
      (r) => r.detail,
    );
  }
}

/**
 * The list query for the filters present. With a model filter the rows are driven from log_entry_models,
 * whose key is already in keyset order; otherwise from log_entries, where SQLite picks the index whose
 * prefix matches the equality filters and reads it in (started_at, id) order without sorting.
 */
export function listQuery(
  filter: LogFilter,
  page: PageRequest,
): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { workspaceId: filter.workspaceId, limit: page.limit + 1 };
  const where = ["l.workspace_id = @workspaceId"];
  let from = "log_entries l";
  let key = { startedAt: "l.started_at", id: "l.id" };
  if (filter.model !== undefined) {
    from = "log_entry_models m JOIN log_entries l ON l.id = m.log_id";
    where.unshift("m.workspace_id = @workspaceId", "m.model = @model");
    params.model = filter.model;
    key = { startedAt: "m.started_at", id: "m.log_id" };
  }
  // A list is one bound value, so the SQL text does not depend on its length: the statement cache holds
  // one statement per combination of filters present, and no list meets SQLite's 32,766-parameter cap
  // (issue 11). One value stays an equality, so SQLite can walk the index led by that column in keyset
  // order; several are a JSON array read by json_each, planned like the IN list it replaces.
  const inList = (column: string, name: string, values: string[] | undefined) => {
    if (!values?.length) return;
    if (values.length === 1) {
      where.push(`${column} = @${name}`);
      params[name] = values[0];
      return;
    }
    where.push(`${column} IN (SELECT value FROM json_each(@${name}))`);
    params[name] = JSON.stringify(values);
  };
  const compare = (sql: string, name: string, value: unknown) => {
    if (value === undefined) return;
    where.push(sql);
    params[name] = value;
  };
  inList("l.workflow_id", "workflow", filter.workflowIds);
  inList("l.folder_id", "folder", filter.folderIds);
  inList("l.trigger", "trigger", filter.triggers);
  compare("l.level = @level", "level", filter.level);
  compare(`${key.startedAt} >= @startedFrom`, "startedFrom", filter.startedFrom);
  compare(`${key.startedAt} <= @startedTo`, "startedTo", filter.startedTo);
  compare("l.execution_id = @executionId", "executionId", filter.executionId);
  compare("l.total_duration_ms >= @minDurationMs", "minDurationMs", filter.minDurationMs);
  compare("l.total_duration_ms <= @maxDurationMs", "maxDurationMs", filter.maxDurationMs);
  compare("l.cost_total >= @minCost", "minCost", filter.minCost);
  compare("l.cost_total <= @maxCost", "maxCost", filter.maxCost);
  const direction = page.order === "asc" ? "ASC" : "DESC";
  if (page.after) {
    where.push(
      `(${key.startedAt}, ${key.id}) ${page.order === "asc" ? ">" : "<"} (@afterStartedAt, @afterId)`,
    );
    params.afterStartedAt = page.after.startedAt;
    params.afterId = page.after.id;
  }
  const heavy = [
    page.withTraceSpans ? "l.trace_spans_json" : undefined,
    page.withFinalOutput ? "l.final_output_json" : undefined,
  ].filter(Boolean);
  const sql =
    `SELECT ${[lightColumns, ...heavy].join(", ")} FROM ${from} WHERE ${where.join(" AND ")} ` +
    `ORDER BY ${key.startedAt} ${direction}, ${key.id} ${direction} LIMIT @limit`;
  return { sql, params };
}

function toRecord(row: LogRow): LogEntryRecord {
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
