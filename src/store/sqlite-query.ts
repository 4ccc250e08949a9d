import type { Binder } from "./log-list-sql.js";
import type { SearchTerm } from "./search-words.js";

/**
 * How a search (D45) is joined to the list on SQLite, chosen per query by LogsStore.searchPlan from
 * how many entries hold the terms:
 * - `matchesFirst`: the matches drive the statement (few of them), read by rowid and sorted;
 * - `matchSet`: the matches as a set of log_entries rowids, built once, which the scan in keyset order
 *   checks against the index alone, without reading a row;
 * - `matchSeqs`: the matches as a set of FTS5 rowids (seqs), built at a sixth of matchSet's cost (no
 *   lookup of each match in log_entries), each candidate's row read for its seq;
 * - `probe`: no set; each candidate's seq is looked up in FTS5 (a seek in each term's doclist), which
 *   pays when most entries match and a page is found after a few hundred candidates.
 */
export const searchPlans = ["matchesFirst", "matchSet", "matchSeqs", "probe"] as const;
export type SearchPlan = (typeof searchPlans)[number];

/** The condition that `l` holds the FTS5 query bound at `placeholder`, as `plan` reads it. */
const holdsWordsSql: Record<SearchPlan, (placeholder: string) => string> = {
  // The index is keyed by seq, which VACUUM cannot renumber; every index of log_entries holds the rowid.
  matchesFirst: (q) => holdsWordsSql.matchSet(q),
  matchSet: (q) =>
    `l.rowid IN (SELECT e.rowid FROM log_search s CROSS JOIN log_entries e ON e.xid = 0 AND e.seq = s.rowid WHERE log_search MATCH ${q})`,
  matchSeqs: (q) => `l.seq IN (SELECT s.rowid FROM log_search s WHERE log_search MATCH ${q})`,
  probe: (q) => `EXISTS (SELECT 1 FROM log_search s WHERE log_search MATCH ${q} AND s.rowid = l.seq)`,
};

/**
 * A statement built with a Binder, in SQLite's dialect: named parameters, and a list as a JSON array.
 * `search`: how a search is joined (SearchPlan); by default the match set, which no filter's shape can
 * make slower than a scan of the candidates' index.
 */
export function sqliteQuery(
  build: (bind: Binder) => string,
  { search = "matchSet" }: { search?: SearchPlan } = {},
): {
  sql: string;
  params: Record<string, unknown>;
} {
  const params: Record<string, unknown> = {};
  const sql = build({
    value: (name, value) => {
      params[name] = value;
      return `@${name}`;
    },
    // Read by json_each, planned like the IN list it replaces.
    oneOf: (column, name, values) => {
      params[name] = JSON.stringify(values);
      return `${column} IN (SELECT value FROM json_each(@${name}))`;
    },
    holdsWords: (name, terms) => {
      params[name] = fts5Query(terms);
      return holdsWordsSql[search](`@${name}`);
    },
    // Without an index to scan, SQLite reads the entries by the rowids the matches give, then sorts them.
    entriesTable: search === "matchesFirst" ? "log_entries l NOT INDEXED" : undefined,
  });
  return { sql, params };
}

/**
 * Terms in FTS5's query syntax: each word a quoted string (a word holds no `"`: search-words.ts), a
 * prefix marked by FTS5's own `*` after it, all required.
 */
export function fts5Query(terms: SearchTerm[]): string {
  return terms.map(({ word, prefix }) => `"${word}"${prefix ? " *" : ""}`).join(" AND ");
}
