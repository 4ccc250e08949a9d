import {
  type Binder,
  type LogFilter,
  listSql,
  type Page,
  type PageRequest,
  pageOf,
} from "../log-list-sql.js";
import {
  type EntryView,
  type EntryViewRow,
  type ExecutionRow,
  type ExecutionRows,
  entryViewFromRow,
  entryViewSql,
  executionFromRow,
  executionRows,
  type LogRow,
  lightColumns,
  logEntryFromRow,
  type RetryLinksRow,
  retryLinksFromRow,
  retryLinksSql,
} from "../log-rows.js";
import {
  type HourRange,
  type HourRow,
  hourStatsSql,
  type LogStats,
  type ModelCostRow,
  modelCostsSql,
  type StatsFilter,
  statsOf,
} from "../log-stats-sql.js";
import {
  comparePositions,
  postgresWriteOrder,
  type TailEntry,
  type TailPosition,
  type TailRequest,
  type TailRow,
  tailEntryFromRow,
  tailSql,
  type WritesSince,
  writtenWorkspacesSql,
} from "../log-tail-sql.js";
import type { FanOutIntent } from "../outbox-store.js";
import type { ExecutionRecord, LogEntryRecord, RetryLink, RetryLinks } from "../records.js";
import type { SearchTerm } from "../search-words.js";
import { listOverTime, statsOverTime } from "../tenant-reads.js";
import type { WriteWatch } from "../write-watch.js";
import { type PostgresPool, type Queryable, readSnapshot, withTransaction } from "./database.js";
import { executionsPerStatement, insertStatement, type TimedFanOut } from "./execution-insert.js";
import { searchableFilter, workflowNames } from "./search-index.js";
import { TenantReads } from "./tenant-reads.js";
import { notificationWatch } from "./write-notices.js";

const entryByIdSql = `SELECT ${lightColumns}, l.trace_spans_json, l.final_output_json FROM log_entries l WHERE l.id = $1`;
const entryViewByIdSql = entryViewSql.replace("?", "$1");
const executionByIdSql = `SELECT ${lightColumns}, s.workflow_state_json, e.workflow_version FROM log_entries l
  JOIN execution_states e ON e.execution_id = l.execution_id
  JOIN workflow_states s ON s.hash = e.state_hash WHERE l.execution_id = $1`;
const retryLinksByIdSql = retryLinksSql("$1");

/**
 * Log entries and execution snapshots on PostgreSQL (D17, D32): the SQLite LogsStore's methods and
 * answers, as promises. Rows, records, state keys and the list query are the ones SQLite's store uses
 * (log-rows.ts, log-list-sql.ts); only the statements' dialect differs. Lists and stats run on the
 * tenant reads' pool, within their time and cancelled when their caller leaves (D46).
 */
export class PostgresLogsStore {
  /** D44: calls its listeners after writes of any process to the database (write-notices.ts). */
  readonly writes: WriteWatch;

  /** `reads` defaults to the main pool, for tools and tests that open one pool only. */
  constructor(
    private readonly pool: PostgresPool,
    private readonly reads = TenantReads.on(pool),
  ) {
    this.writes = notificationWatch(pool);
  }

  /**
   * Writes an execution's log entry and snapshot in one statement. Idempotent on the execution id, so a
   * retried write never duplicates (D17). Returns whether it was new. A `fanOut` goes into the
   * notification outbox with a new entry only, in the same statement (issue 12).
   */
  async insertExecution(record: ExecutionRecord, fanOut?: FanOutIntent): Promise<boolean> {
    const timed = fanOut && { ...fanOut, now: Date.now() };
    return (await write(this.pool, [executionRows(record)], timed)) === 1;
  }

  /** Many executions per transaction, for bulk loads: see insertRows. */
  insertExecutions(records: ExecutionRecord[]): Promise<number> {
    return this.insertRows(records.map(executionRows));
  }

  /**
   * Executions already serialised (executionRows), in one transaction, as SQLite writes a batch: one
   * statement, or several when the batch is larger than one statement may bind. Returns how many were new.
   */
  insertRows(rows: ExecutionRows[]): Promise<number> {
    if (rows.length <= executionsPerStatement) return write(this.pool, rows);
    return withTransaction(this.pool, async (client) => {
      let inserted = 0;
      for (let start = 0; start < rows.length; start += executionsPerStatement) {
        inserted += await write(client, rows.slice(start, start + executionsPerStatement));
      }
      return inserted;
    });
  }

  async getEntry(id: string): Promise<LogEntryRecord | undefined> {
    const { rows } = await this.pool.query<LogRow>(entryByIdSql, [id]);
    return rows[0] && logEntryFromRow(rows[0]);
  }

  async getEntryView(id: string): Promise<EntryView | undefined> {
    const { rows } = await this.pool.query<EntryViewRow>(entryViewByIdSql, [id]);
    return rows[0] && entryViewFromRow(rows[0]);
  }

  async getExecution(executionId: string): Promise<ExecutionRecord | undefined> {
    const { rows } = await this.pool.query<ExecutionRow>(executionByIdSql, [executionId]);
    return rows[0] && executionFromRow(rows[0]);
  }

  async recordRetry(link: RetryLink): Promise<void> {
    await this.pool.query(
      `INSERT INTO execution_retries (execution_id, retry_of, created_at) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING`,
      [link.executionId, link.retryOf, link.createdAt],
    );
  }

  async forgetRetry(executionId: string): Promise<void> {
    await this.pool.query("DELETE FROM execution_retries WHERE execution_id = $1", [executionId]);
  }

  async retryLinks(executionId: string): Promise<RetryLinks> {
    const { rows } = await this.pool.query<RetryLinksRow>(retryLinksByIdSql, [executionId]);
    return retryLinksFromRow(rows[0] as RetryLinksRow);
  }

  async list(filter: LogFilter, page: PageRequest, signal?: AbortSignal): Promise<Page> {
    const { rows } = await this.reads.run(signal, listOverTime, async (client) =>
      client.query<LogRow>(listQuery(filter, page, await searchPlan(client, filter))),
    );
    return pageOf(rows, page.limit);
  }

  /** D44: the entries `filter` selects between two positions of write order, in that order. */
  async tail(filter: LogFilter, request: TailRequest): Promise<TailEntry[]> {
    const { rows } = await this.reads.run(undefined, listOverTime, (client) =>
      client.query<TailRow>(postgresQuery((bind) => tailSql(filter, request, bind, postgresWriteOrder))),
    );
    return rows.map(tailEntryFromRow);
  }

  /**
   * D44: how far entries are settled now, (xmin, 0): every transaction older than a snapshot's xmin has
   * ended, and any later one has a larger xid. And which workspaces were written to after `after` (none asked: the horizon alone).
   */
  async writesSince(after: TailPosition | undefined): Promise<WritesSince> {
    const { rows } = await this.pool.query<{ xmin: string }>(
      "SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin",
    );
    const horizon = { xid: rows[0]?.xmin ?? "0", seq: 0 };
    if (!after || comparePositions(horizon, after) <= 0) return { horizon, workspaceIds: [] };
    const written = await this.pool.query<{ workspace_id: string }>(
      postgresQuery((bind) => writtenWorkspacesSql(after, horizon, bind, postgresWriteOrder)),
    );
    return { horizon, workspaceIds: written.rows.map((row) => row.workspace_id) };
  }

  /**
   * Per hour of `range` and per day and model, the entries the list would give for `filter` (issue 17).
   * Both statements read one snapshot, so the hours and the costs count the same entries.
   */
  async stats(filter: StatsFilter, range: HourRange, signal?: AbortSignal): Promise<LogStats> {
    const limitMs = this.reads.limits.statsTimeoutMs;
    return this.reads.run(
      signal,
      statsOverTime,
      (client) =>
        readSnapshot(client, async () => {
          // The whole call's limit, for each statement on the server too (the pool's is the list's).
          await client.query(`SET LOCAL statement_timeout = ${Math.trunc(limitMs)}`);
          const hours = await client.query<HourRow>(
            postgresQuery((bind) => hourStatsSql(filter, range, bind)),
          );
          const costs = await client.query<ModelCostRow>(
            postgresQuery((bind) => modelCostsSql(filter, range, bind)),
          );
          return statsOf(hours.rows, costs.rows, range);
        }),
      limitMs,
    );
  }

  /** The plans of the stats' two statements, for tests that hold them to their indexes. */
  async explainStats(filter: StatsFilter, range: HourRange): Promise<string[][]> {
    const plans: string[][] = [];
    for (const build of [hourStatsSql, modelCostsSql]) {
      const { text, values } = postgresQuery((bind) => build(filter, range, bind));
      const { rows } = await this.pool.query<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, values);
      plans.push(rows.map((row) => row["QUERY PLAN"]));
    }
    return plans;
  }

  /** The plan of the list query, for tests that hold the indexes to their promise. */
  async explainList(filter: LogFilter, page: PageRequest): Promise<string[]> {
    const { text, values } = listQuery(filter, page, await searchPlan(this.pool, filter));
    const { rows } = await this.pool.query<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, values);
    return rows.map((row) => row["QUERY PLAN"]);
  }
}

/**
 * How a search (D45) joins the list on PostgreSQL, chosen per query by searchPlan:
 * - `probe`: each candidate in keyset order is looked up in log_search (the EXISTS), which pays when many
 *   entries match and a page is found after a few hundred candidates; the planner may still choose;
 * - `matchSet`: the matches' ids, found by the GIN index, as a hashed set that the keyset index's keys are
 *   checked against without reading a row; then the page's rows by id. A word held by a few thousand
 *   entries reads tens of thousands of keys for a page, each probed at ten times a key's cost;
 * - `matchesFirst`: the matches, found by the GIN index, are the candidates, read by id and sorted.
 */
export const searchPlans = ["probe", "matchSet", "matchesFirst"] as const;
export type SearchPlan = (typeof searchPlans)[number];

/**
 * Above this many matches, as the planner's statistics of log_search estimate them, a search probes
 * (SearchPlan): 54k matches (5 % of 1M entries) made a set in 180 ms on a loaded machine, while the
 * ~2,000 probes of a page took 20 ms; 4,300 made it in 12 to 50 ms, where the probes of its page (23,000)
 * took 600 ms. A set this large still fits work_mem, which a hashed set must.
 */
const matchSetMatches = 20_000;

/**
 * Below this many matches, counted, the matches drive the list: a set of them leaves a page to be
 * looked for along the whole keyset index (a word no entry holds scanned 1M keys in 200 ms).
 */
const searchFirstMatches = 2_000;

/**
 * D45: the plan for the filter's search, from the planner's estimate of its matches (the statistics of
 * log_search's words) and, when that is small, their count up to searchFirstMatches (an estimate of a
 * word outside those statistics is a guess).
 */
async function searchPlan(db: Pick<Queryable, "query">, filter: LogFilter): Promise<SearchPlan> {
  if (!filter.search) return "probe";
  const query = [tsquery(searchableFilter(filter).search ?? filter.search)];
  const { rows } = await db.query<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }>(
    "EXPLAIN (FORMAT JSON) SELECT 1 FROM log_search WHERE words @@ $1::tsquery",
    query,
  );
  if ((rows[0]?.["QUERY PLAN"][0].Plan["Plan Rows"] ?? 0) >= matchSetMatches) return "probe";
  const counted = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM log_search WHERE words @@ $1::tsquery LIMIT ${searchFirstMatches}) m`,
    query,
  );
  return (counted.rows[0]?.n ?? 0) < searchFirstMatches ? "matchesFirst" : "matchSet";
}

/** The list query (listSql) in PostgreSQL's dialect, its search joined as `search` says. */
export function listQuery(
  filter: LogFilter,
  page: PageRequest,
  search: SearchPlan = "probe",
): { text: string; values: unknown[] } {
  // The level's and trigger's lexemes serve the sets of matches; a probe looks up one entry, whose level
  // and trigger the list checks anyway, and the planner would count their selectivity twice.
  const searched = search === "probe" ? filter : searchableFilter(filter);
  return postgresQuery((bind) => listSql(searched, page, bind), search);
}

/**
 * A statement built with a Binder, in PostgreSQL's dialect: numbered parameters, and a list as one text[].
 * `search`: how a search is joined (SearchPlan).
 */
export function postgresQuery(
  build: (bind: Binder) => string,
  search: SearchPlan = "probe",
): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const numbers = new Map<string, number>();
  const placeholder = (name: string, value: unknown) => {
    let number = numbers.get(name);
    if (number === undefined) {
      number = values.push(value);
      numbers.set(name, number);
    }
    return `$${number}`;
  };
  let matches = "";
  const text = build({
    value: placeholder,
    oneOf: (column, name, list) => `${column} = ANY(${placeholder(name, list)}::text[])`,
    holdsWords: (name, terms) => {
      const words = `${placeholder(name, tsquery(terms))}::tsquery`;
      if (search === "probe") {
        return `EXISTS (SELECT 1 FROM log_search s WHERE s.log_id = l.id AND s.words @@ ${words})`;
      }
      // Materialised, so the planner reads the matches and looks each entry up, never the other way.
      matches = `WITH search_matches AS MATERIALIZED (SELECT s.log_id FROM log_search s WHERE s.words @@ ${words}) `;
      if (search === "matchesFirst") return "l.id IN (SELECT log_id FROM search_matches)";
      // IS TRUE keeps the IN from becoming a join: it stays a condition, which PostgreSQL checks
      // against the matches hashed once (a hashed SubPlan), along the keyset index.
      return "(l.id IN (SELECT log_id FROM search_matches)) IS TRUE";
    },
    keysFirst: search === "matchSet",
  });
  return { text: `${matches}${text}`, values };
}

/**
 * Terms as tsquery's text, read by the cast as it is (no parser, no dictionary, D45): each word a quoted
 * lexeme (a word holds no quote or backslash: search-words.ts), a prefix marked `:*`, all required.
 */
function tsquery(terms: SearchTerm[]): string {
  return terms.map(({ word, prefix }) => `'${word}'${prefix ? ":*" : ""}`).join(" & ");
}

async function write(db: Queryable, rows: ExecutionRows[], fanOut?: TimedFanOut): Promise<number> {
  if (rows.length === 0) return 0;
  const names = await workflowNames(
    db,
    rows.map((row) => row.entry.workflowId),
  );
  const { rows: result } = await db.query<{ inserted: number }>(insertStatement(rows, names, fanOut));
  return result[0]?.inserted ?? 0;
}
