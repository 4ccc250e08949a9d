/**
 * The store's database cannot be reached right now (issue 15: a lost PostgreSQL connection, a server
 * restarting or refusing connections). Nothing was acknowledged, so the request may be retried: the API
 * answers 503 `unavailable`, and a Temporal activity that meets it is retried like any transient fault.
 * The message names no host or credential.
 */
export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";

  constructor(options?: ErrorOptions) {
    super("the database is unreachable; retry shortly", options);
  }
}
