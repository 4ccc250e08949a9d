import { dataVersionWatch } from "./data-version-watch.js";
import type { Db } from "./database.js";
import { type LogFilter, listSql, type Page, type PageRequest, pageOf } from "./log-list-sql.js";
import {
  type EntryView,
  type EntryViewRow,
  type ExecutionRow,
  type ExecutionRows,
  entryViewFromRow,
  entryViewSql,
  executionFromRow,
  executionRows,
  type ListedRow,
  type LogRow,
  lightColumns,
  listedRowReader,
  logEntryFromRow,
  type RetryLinksRow,
  retryLinksFromRow,
  retryLinksSql,
  stateKeys,
} from "./log-rows.js";
import {
  type HourRange,
  hourStatsSql,
  type LogStats,
  modelCostsSql,
  type StatsFilter,
} from "./log-stats-sql.js";
import { LogStatsThreads } from "./log-stats-thread.js";
import {
  sqliteWriteOrder,
  type TailEntry,
  type TailPosition,
  type TailRequest,
  type TailRow,
  tailEntryFromRow,
  tailSql,
  type WritesSince,
  writtenWorkspacesSql,
} from "./log-tail-sql.js";
import type { FanOutIntent } from "./outbox-store.js";
import type { ExecutionRecord, LogEntryRecord, RetryLink, RetryLinks } from "./records.js";
import { entryWords } from "./search-words.js";
import { fts5Query, type SearchPlan, sqliteQuery } from "./sqlite-query.js";
import type { WriteWatch } from "./write-watch.js";

/** One log entry by id, heavy columns included (GET /api/v1/logs/{id}). */
export const entryByIdSql = `SELECT ${lightColumns}, l.trace_spans_json, l.final_output_json FROM log_entries l WHERE l.id = ?`;

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
  private readonly insertWords;
  private readonly workflowName;
  private readonly countMatches;
  private readonly countNewestMatches;
  private readonly byId;
  private readonly viewById;
  private readonly byExecution;
  private readonly retries;
  /**
   * The list's statements, one per combination of filters present (listQuery), each in raw mode with the
   * reader of its columns (listedRowReader).
   */
  private readonly pages = new Map<string, PageStatement>();
  /** The tail's statements (D44), one per combination of filters present and details asked for. */
  private readonly tails = new Map<string, ReturnType<Db["prepare"]>>();
  private readonly lastSeq;
  /** D44: calls its listeners after writes of any process to the file (data-version-watch.ts). */
  readonly writes: WriteWatch;

  /**
   * `statsThreads` run the stats, which read for seconds over a long range, off this thread
   * (log-stats-worker.ts); the store that made them ends them.
   */
  constructor(
    private readonly db: Db,
    private readonly statsThreads: Pick<LogStatsThreads, "stats"> = new LogStatsThreads(db.name),
  ) {
    this.insertEntry = db.prepare(
      `INSERT INTO log_entries (id, workspace_id, workflow_id, folder_id, execution_id, billed_user_id, level,
         trigger, started_at, ended_at, total_duration_ms, cost_total, cost_json, cost_canonical, files_json,
         trace_spans_json, trace_spans_canonical, final_output_json)
       VALUES (@id, @workspaceId, @workflowId, @folderId, @executionId, @billedUserId, @level, @trigger, @startedAt,
         @endedAt, @totalDurationMs, @costTotal, @costJson, @costCanonical, @filesJson, @traceSpansJson,
         @traceSpansCanonical, @finalOutputJson)
       ON CONFLICT (execution_id) DO NOTHING`,
    );
    this.insertModel = db.prepare(
      `INSERT OR IGNORE INTO log_entry_models (workspace_id, model, started_at, log_id, cost_nano_usd, tokens)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    this.insertState = db.prepare(
      "INSERT OR IGNORE INTO workflow_states (hash, workflow_state_json) VALUES (?, ?)",
    );
    this.insertExecutionState = db.prepare(
      "INSERT OR IGNORE INTO execution_states (execution_id, state_hash, workflow_version) VALUES (?, ?, ?)",
    );
    this.insertFanOut = db.prepare(
      `INSERT OR IGNORE INTO notification_outbox
         (log_id, workspace_id, workflow_id, task_queue, trace_parent, trace_state, created_at, not_before)
       VALUES (@logId, @workspaceId, @workflowId, @taskQueue, @traceparent, @tracestate, @now, @now)`,
    );
    // D45: keyed by the entry's seq (rowids are not stable), which the insert's trigger has just taken
    // from the counter row (lastSeq). Bound as a value: an INSERT ... SELECT into FTS5 cost 5x as much.
    this.insertWords = db.prepare("INSERT INTO log_search (rowid, words) VALUES (?, ?)");
    this.workflowName = db.prepare("SELECT name FROM workflows WHERE id = ?").pluck();
    this.countMatches = db
      .prepare(
        `SELECT count(*) FROM (SELECT 1 FROM log_search WHERE log_search MATCH ? LIMIT ${searchFirstMatches})`,
      )
      .pluck();
    // Read newest first with a LIMIT, FTS5 stops at the sample's end; a bound on the rowid alone is
    // checked against each match from the oldest (13 ms for a word 438k entries hold, this 0.5 ms).
    this.countNewestMatches = db
      .prepare(
        `SELECT count(*) FROM (SELECT rowid FROM log_search WHERE log_search MATCH ? ORDER BY rowid DESC
           LIMIT ${shareSample}) WHERE rowid > ?`,
      )
      .pluck();
    this.byId = db.prepare(entryByIdSql);
    this.viewById = db.prepare(entryViewSql);
    this.lastSeq = db.prepare("SELECT last FROM log_entry_sequence").pluck();
    this.writes = dataVersionWatch(db.name);
    this.retries = {
      record: db.prepare(
        `INSERT OR IGNORE INTO execution_retries (execution_id, retry_of, created_at)
         VALUES (@executionId, @retryOf, @createdAt)`,
      ),
      forget: db.prepare("DELETE FROM execution_retries WHERE execution_id = ?"),
      links: db.prepare(retryLinksSql("@executionId")),
    };
    this.byExecution = db.prepare(
      `SELECT ${lightColumns}, s.workflow_state_json, e.workflow_version FROM log_entries l
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
  async insertExecution(record: ExecutionRecord, fanOut?: FanOutIntent): Promise<boolean> {
    return this.db.transaction(() => {
      const inserted = this.insertOne(executionRows(record), this.stateKeys());
      if (inserted && fanOut)
        this.insertFanOut.run({ traceparent: null, tracestate: null, ...fanOut, now: Date.now() });
      return inserted;
    })();
  }

  /** Many executions per transaction, for bulk loads: see insertRows. */
  async insertExecutions(records: ExecutionRecord[]): Promise<number> {
    return this.insertRows(records.map(executionRows));
  }

  /**
   * Executions already serialised (executionRows), many per transaction, for bulk loads (seed): one fsync
   * per batch, not per row, and each distinct workflow state object serialised and hashed once per batch.
   */
  async insertRows(rows: ExecutionRows[]): Promise<number> {
    return this.db.transaction(() => {
      const stateKey = this.stateKeys();
      return rows.filter((r) => this.insertOne(r, stateKey)).length;
    })();
  }

  private insertOne(
    { entry, models, workflowState, workflowVersion, contentWords }: ExecutionRows,
    stateKey: (workflowState: unknown) => Buffer,
  ): boolean {
    if (this.insertEntry.run(entry).changes === 0) return false;
    const name = this.workflowName.get(entry.workflowId) as string | undefined;
    this.insertWords.run(this.lastSeq.get(), entryWords(name, contentWords).join(" "));
    for (const m of models) {
      this.insertModel.run(entry.workspaceId, m.model, entry.startedAt, entry.id, m.costNanoUsd, m.tokens);
    }
    this.insertExecutionState.run(entry.executionId, stateKey(workflowState), workflowVersion);
    return true;
  }

  /** Keys for one transaction's states, each new one written as it is first met. */
  private stateKeys() {
    return stateKeys((key, json) => this.insertState.run(key, json));
  }

  async getEntry(id: string): Promise<LogEntryRecord | undefined> {
    const row = this.byId.get(id) as LogRow | undefined;
    return row && logEntryFromRow(row);
  }

  /** One entry with its workflow's summary, in one statement: what the logs API shows of it alone. */
  async getEntryView(id: string): Promise<EntryView | undefined> {
    const row = this.viewById.get(id) as EntryViewRow | undefined;
    return row && entryViewFromRow(row);
  }

  async getExecution(executionId: string): Promise<ExecutionRecord | undefined> {
    const row = this.byExecution.get(executionId) as ExecutionRow | undefined;
    return row && executionFromRow(row);
  }

  /** D47: records a retry as it starts; recording it again changes nothing. */
  async recordRetry(link: RetryLink): Promise<void> {
    this.retries.record.run(link);
  }

  /** D47: forgets a retry that did not start after all. */
  async forgetRetry(executionId: string): Promise<void> {
    this.retries.forget.run(executionId);
  }

  /** D47: the execution a retry retries, and the newest retry of an execution. */
  async retryLinks(executionId: string): Promise<RetryLinks> {
    const row = this.retries.links.get({ executionId }) as RetryLinksRow;
    return retryLinksFromRow(row);
  }

  /**
   * One page of the list. It reads on this thread, which better-sqlite3 cannot interrupt, so `signal`
   * (the caller leaving, which PostgreSQL's list honours) is not looked at: the keyset indexes bound it.
   */
  async list(filter: LogFilter, page: PageRequest, _signal?: AbortSignal): Promise<Page> {
    const { sql, params } = listQuery(filter, page, this.searchPlan(filter, page.limit));
    const { statement, read } = this.pageStatement(sql);
    return pageOf((statement.all(params) as unknown[][]).map(read), page.limit);
  }

  /**
   * Per hour of `range` and per day and model, the entries the list would give for `filter` (issue 17).
   * Both statements read one snapshot, so the hours and the costs count the same entries.
   */
  async stats(filter: StatsFilter, range: HourRange, signal?: AbortSignal): Promise<LogStats> {
    return this.statsThreads.stats(filter, range, signal);
  }

  /** The plans of the stats' two statements, for tests that hold them to their indexes. */
  async explainStats(filter: StatsFilter, range: HourRange): Promise<string[][]> {
    return [hourStatsSql, modelCostsSql].map((build) => {
      const { sql, params } = sqliteQuery((bind) => build(filter, range, bind));
      return (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map(
        (r) => r.detail,
      );
    });
  }

  /** D44: the entries `filter` selects between two positions of write order, in that order. */
  async tail(filter: LogFilter, request: TailRequest): Promise<TailEntry[]> {
    const { sql, params } = sqliteQuery((bind) => tailSql(filter, request, bind, sqliteWriteOrder));
    return (this.tailStatement(sql).all(params) as TailRow[]).map(tailEntryFromRow);
  }

  /**
   * D44: how far entries are settled now (one writer: every number handed out is committed), and which
   * workspaces were written to after `after` (none asked: the horizon alone).
   */
  async writesSince(after: TailPosition | undefined): Promise<WritesSince> {
    const horizon = { xid: "0", seq: this.lastSeq.get() as number };
    if (!after || horizon.seq <= after.seq) return { horizon, workspaceIds: [] };
    const { sql, params } = sqliteQuery((bind) =>
      writtenWorkspacesSql(after, horizon, bind, sqliteWriteOrder),
    );
    return { horizon, workspaceIds: this.tailStatement(sql).pluck().all(params) as string[] };
  }

  private tailStatement(sql: string): ReturnType<Db["prepare"]> {
    let statement = this.tails.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.tails.set(sql, statement);
    }
    return statement;
  }

  private pageStatement(sql: string): PageStatement {
    let page = this.pages.get(sql);
    if (!page) {
      const statement = this.db.prepare(sql).raw(true);
      page = { statement, read: listedRowReader(statement.columns().map((column) => column.name)) };
      this.pages.set(sql, page);
    }
    return page;
  }

  /**
   * D45: how the filter's search joins a page of `limit` entries (SearchPlan). Fewer matches than
   * searchFirstMatches, across workspaces (FTS5 counts them fast; each workspace's share is not known
   * to it): they drive the list, unless a model's rows do. Otherwise the share of entries holding the
   * terms among the newest shareSample written gives how many match (that share of every entry written)
   * and how many candidates a page reads in keyset order before it is full (limit / share, the filters
   * taken as independent of the words), and the plan that costs least for those (searchCosts) is taken.
   */
  private searchPlan(filter: LogFilter, limit: number): SearchPlan {
    if (!filter.search) return "matchSet";
    const query = fts5Query(filter.search);
    const written = Math.max(this.lastSeq.get() as number, 1);
    const counted = this.countMatches.get(query) as number;
    let share = counted / written;
    if (counted < searchFirstMatches) {
      if (filter.model === undefined) return "matchesFirst";
    } else {
      const sampled = Math.min(shareSample, written);
      const held = this.countNewestMatches.get(query, written - sampled) as number;
      share = Math.max(held / sampled, share);
    }
    return cheapestSearchPlan(share * written, Math.min(written, (limit + 1) / Math.max(share, 1e-9)));
  }

  /** The plan of the list query, for tests that hold the indexes to their promise. */
  async explainList(filter: LogFilter, page: PageRequest): Promise<string[]> {
    const { sql, params } = listQuery(filter, page, this.searchPlan(filter, page.limit));
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map(
      (r) => r.detail,
    );
  }
}

interface PageStatement {
  statement: ReturnType<Db["prepare"]>;
  read: (values: unknown[]) => ListedRow;
}

/** The list query (listSql) in SQLite's dialect; `search` as sqliteQuery takes it. */
export function listQuery(
  filter: LogFilter,
  page: PageRequest,
  search?: SearchPlan,
): { sql: string; params: Record<string, unknown> } {
  return sqliteQuery((bind) => listSql(filter, page, bind), { search });
}

/**
 * Below this many matches a search drives the list (LogsStore.searchPlan): reading 1,100 matches by
 * rowid and sorting them took 4 ms (20,000 seeded entries), where a rare word's scan of a workspace's
 * keyset index grows with the workspace (12 ms at 20,000 entries, 0.5 µs an entry); a common word's 10,000
 * matches read by rowid took 76 ms, along the index 14 ms.
 */
const searchFirstMatches = 2_000;

/** The newest entries whose matches give a search's share (half a millisecond of FTS5's doclists). */
const shareSample = 10_000;

/**
 * What each keyset plan costs, in µs, for `matches` entries holding the terms and `candidates` entries
 * read before a page is full: a match set's entry per match, and a candidate's check; measured at 1M
 * seeded entries (bench/search.ts, 2026-12-03), for words held by 0.5 %, 5 % and 44 % of them.
 */
const searchCosts: Record<Exclude<SearchPlan, "matchesFirst">, { match: number; candidate: number }> = {
  // A match's seq looked up in log_entries for its rowid; a candidate checked in the keyset index alone.
  matchSet: { match: 0.9, candidate: 0.3 },
  // FTS5's rowids as they come; a candidate's row read for its seq.
  matchSeqs: { match: 0.15, candidate: 3.5 },
  // A seek in each term's doclist, in every segment of the FTS5 index, per candidate: 100 to 300 µs.
  probe: { match: 0, candidate: 150 },
};

function cheapestSearchPlan(matches: number, candidates: number): SearchPlan {
  const cost = (plan: keyof typeof searchCosts) =>
    searchCosts[plan].match * matches + searchCosts[plan].candidate * candidates;
  const plans = Object.keys(searchCosts) as (keyof typeof searchCosts)[];
  return plans.reduce((best, plan) => (cost(plan) < cost(best) ? plan : best));
}
