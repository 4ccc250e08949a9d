/** A statement as pg runs it: numbered placeholders, and the values they stand for in order. */
export interface NumberedStatement {
  text: string;
  values: unknown[];
}

/**
 * A statement written with SQLite's `@name` parameters, as pg runs it: each name becomes one `$n`
 * however often it appears, so a statement both stores run alike is written once (D32). A name the
 * parameters lack is an error, as in better-sqlite3; parameters the statement does not name are ignored.
 */
export function namedStatement(sql: string): (parameters?: object) => NumberedStatement {
  const names: string[] = [];
  const text = sql.replace(/@([A-Za-z_]\w*)/g, (_, name: string) => {
    const index = names.indexOf(name);
    return `$${index === -1 ? names.push(name) : index + 1}`;
  });
  return (parameters = {}) => ({
    text,
    values: names.map((name) => {
      if (!(name in parameters)) throw new RangeError(`missing named parameter @${name}`);
      return (parameters as Record<string, unknown>)[name];
    }),
  });
}
