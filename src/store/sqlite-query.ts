import type { Binder } from "./log-list-sql.js";

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
  });
  return { sql, params };
}
