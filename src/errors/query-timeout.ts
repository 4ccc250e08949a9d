/**
 * A read the store gave up on because it ran past its time (the log stats on SQLite, issue 17): the
 * request asked for more rows than the time allows, so the API answers 504 `deadline_exceeded` with the
 * message, which says what to narrow. Nothing was written; the same request will take as long again.
 */
export class QueryTimeoutError extends Error {
  override name = "QueryTimeoutError";
}
