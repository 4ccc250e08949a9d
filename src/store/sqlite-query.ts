import type { Binder } from "./log-list-sql.js";
import type { SearchTerm } from "./search-words.js";

/** A statement built with a Binder, in SQLite's dialect: named parameters, and a list as a JSON array. */
export function sqliteQuery(build: (bind: Binder) => string): {
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
      return `l.seq IN (SELECT rowid FROM log_search WHERE log_search MATCH @${name})`;
    },
  });
  return { sql, params };
}

/**
 * Terms in FTS5's query syntax: each word a quoted string (a word holds no `"`: search-words.ts), a
 * prefix marked by FTS5's own `*` after it, all required.
 */
function fts5Query(terms: SearchTerm[]): string {
  return terms.map(({ word, prefix }) => `"${word}"${prefix ? " *" : ""}`).join(" AND ");
}
