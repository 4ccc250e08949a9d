import { databaseFile, openDatabase } from "../src/store/database.js";
import type { LogFilter, Page, PageRequest } from "../src/store/log-list-sql.js";
import { openPostgres } from "../src/store/postgres/database.js";
import { PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import { type SearchTerm, searchTermsOf } from "../src/store/search-words.js";
import { page } from "./list-query.js";
import { workspaceId as pgWorkspaceId, seed } from "./list-query-pg.js";
import { benchPostgres } from "./support/postgres.js";
import { type Bench, type BenchOptions, ms, type Table } from "./support/report.js";
import { type SampleBudget, sampleAsync } from "./support/sample.js";
import { openBenchStore, seedLarge } from "./support/store.js";

const dayMs = 86_400_000;

const plans = {
  quick: { size: 5_000, budget: { count: 50, maxMs: 100 } },
  full: { size: 1_000_000, budget: { count: 1_000, maxMs: 5_000 } },
} satisfies Record<string, { size: number; budget: SampleBudget }>;

/** The shares of entries the measured words are picked to be found in: a common, a middling, a rare word. */
const shares = [0.5, 0.05, 0.005];

/** A word and how many entries hold it, as the store's index counts them. */
interface WordCount {
  word: string;
  entries: number;
}

/**
 * D45's goal (issue 53): a one-word `q` at 1M entries answers its first 100-row page within p99 50 ms on
 * both stores, alone and with other filters. Each store is seeded with the seeder's executions, then
 * measured in-process at its store's list, like list-query, for words found in about half, a twentieth
 * and a two-hundredth of the entries, and a prefix of the middling one.
 */
export const searchBench: Bench = {
  name: "search",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const size = options.sizes?.[0] ?? plan.size;
    return [await measureSqlite(size, plan.budget), await measurePostgres(options, size, plan.budget)];
  },
};

async function measureSqlite(size: number, budget: SampleBudget): Promise<Table> {
  const bench = await openBenchStore();
  const now = Date.now();
  try {
    await seedLarge(bench, size, now);
    const db = openDatabase(databaseFile(bench.dataDir));
    let counts: WordCount[];
    try {
      // fts5vocab reads the index's own counts: how many entries hold each word.
      db.exec("CREATE VIRTUAL TABLE temp.search_vocab USING fts5vocab(main, log_search, row)");
      counts = db.prepare("SELECT term AS word, doc AS entries FROM temp.search_vocab").all() as WordCount[];
    } finally {
      db.close();
    }
    const rows = await measure(
      (filter, request) => bench.store.logs.list(filter, request),
      bench.workspaceId,
      now,
      pickWords(counts, size),
      budget,
    );
    return searchTable(`search on SQLite: ${size.toLocaleString("en-US")} log entries`, rows);
  } finally {
    await bench.dispose();
  }
}

async function measurePostgres(options: BenchOptions, size: number, budget: SampleBudget): Promise<Table> {
  const server = await benchPostgres(options);
  try {
    const pool = await openPostgres(await server.createDatabase());
    try {
      const logs = new PostgresLogsStore(pool);
      const now = Date.now();
      await seed(logs, size, now);
      await pool.query("VACUUM ANALYZE");
      const { rows: counts } = await pool.query<WordCount>(
        "SELECT word, ndoc AS entries FROM ts_stat('SELECT words FROM log_search')",
      );
      const rows = await measure(
        (filter, request) => logs.list(filter, request),
        pgWorkspaceId,
        now,
        pickWords(counts, size),
        budget,
      );
      return searchTable(`search on PostgreSQL: ${size.toLocaleString("en-US")} log entries`, rows);
    } finally {
      await pool.end();
    }
  } finally {
    await server.stop();
  }
}

/** For each share, the word (of letters: ids and numbers are not what people search for) nearest to it. */
function pickWords(counts: WordCount[], size: number): WordCount[] {
  const words = counts
    .filter((c) => /^\p{L}{3,}$/u.test(c.word))
    .map((c) => ({ ...c, entries: Number(c.entries) }));
  return shares.map((share) => {
    const nearest = (c: WordCount) => Math.abs(c.entries - share * size);
    return words.reduce((best, c) => (nearest(c) < nearest(best) ? c : best));
  });
}

/** One row per query and filter set: the first 100-row page, and how many entries the query finds. */
async function measure(
  list: (filter: LogFilter, request: PageRequest) => Promise<Page>,
  workspaceId: string,
  now: number,
  words: WordCount[],
  budget: SampleBudget,
): Promise<(string | number)[][]> {
  const middling = words[1] as WordCount;
  const queries: [string, number][] = [
    ...words.map((w): [string, number] => [w.word, w.entries]),
    [`${middling.word.slice(0, 4)}*`, Number.NaN],
  ];
  const filterSets: Record<string, Omit<LogFilter, "search">> = {
    alone: { workspaceId },
    "level=error": { workspaceId, level: "error" },
    "trigger+dates": {
      workspaceId,
      triggers: ["api"],
      startedFrom: now - 20 * dayMs,
      startedTo: now - 5 * dayMs,
    },
  };
  const rows: (string | number)[][] = [];
  for (const [q, entries] of queries) {
    const search = searchTermsOf(q) as SearchTerm[];
    for (const [name, filter] of Object.entries(filterSets)) {
      const searched = { ...filter, search };
      const first = await list(searched, page);
      const timed = await sampleAsync(() => list(searched, page), budget);
      rows.push([
        q,
        Number.isNaN(entries) ? "-" : entries,
        name,
        first.entries.length,
        ms(timed.p50),
        ms(timed.p99),
        ms(timed.max),
      ]);
    }
  }
  return rows;
}

function searchTable(title: string, rows: (string | number)[][]): Table {
  return {
    title: `${title}, first 100-row page of a q (ms)`,
    columns: ["q", "entries holding it", "filters", "rows", "p50", "p99", "max"],
    rows,
    note: "The words are picked from the store's index for the share of entries holding them (1/2, 1/20, 1/200); the prefix is the middling word's first four letters.",
  };
}
