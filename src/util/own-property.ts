/**
 * A value of a table keyed by user-chosen names (block ids, model names, variable names): only the table's
 * own entries count, so a name such as `constructor` or `__proto__` finds nothing rather than a member of
 * Object.prototype (issue 11). Pure, so workflow code may use it too.
 */
export function ownValue<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
