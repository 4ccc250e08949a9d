import type { Binder } from "./log-list-sql.js";
import type { SearchTerm } from "./search-words.js";

/**
 * A statement built with a Binder, in SQLite's dialect: named parameters, and a list as a JSON array.
 * `searchFirst`: the search's matches drive the statement (few of them: logs-store.ts), not an index of
 * log_entries in keyset order.
 */
export function sqliteQuery(
  build: (bind: Binder) => string,
  { searchFirst = false } = {},
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
    // D45: matches as rowids of log_entries, which every index of it holds: a scan in keyset order checks
    // each entry without reading its row. The index is keyed by seq, which VACUUM cannot renumber.
    holdsWords: (name, terms) => {
      params[name] = fts5Query(terms);
      return `l.rowid IN (SELECT e.rowid FROM log_search s CROSS JOIN log_entries e ON e.xid = 0 AND e.seq = s.rowid
        WHERE log_search MATCH @${name})`;
    },
    // Without an index to scan, SQLite reads the entries by the rowids the matches give, then sorts them.
    entriesTable: searchFirst ? "log_entries l NOT INDEXED" : undefined,
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
