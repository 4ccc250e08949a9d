/**
 * better-sqlite3's error for a lock another connection held past the busy timeout (SQLITE_BUSY and its
 * extended codes): nothing of the transaction was written, and trying again later may succeed.
 */
export function isSqliteBusy(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}
