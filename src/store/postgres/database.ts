import pg from "pg";
import { StoreUnavailableError } from "../../errors/store-unavailable.js";
import { migrate } from "./migrations.js";

export type PostgresPool = pg.Pool;
/** The pool, or one of its connections inside a transaction: what a statement runs on. */
export type Queryable = pg.Pool | pg.PoolClient;

/**
 * What stops a process at start when FLOWLOG_DATABASE_URL is wrong or its server cannot be reached
 * (issue 15): one line naming the variable, with the URL's password masked.
 */
export class DatabaseUrlError extends Error {
  constructor(url: string, problem: string) {
    super(`FLOWLOG_DATABASE_URL=${maskPassword(url)}: ${problem.replace(/\s+/g, " ").trim()}`);
    this.name = "DatabaseUrlError";
  }
}

export interface PostgresOptions {
  /** Connections this process keeps open at most (pg's default is 10). */
  maxConnections?: number;
  /** Every statement's time limit on the server; none when unset (migrations, bulk loads). */
  statementTimeoutMs?: number;
  /** Stop at an older schema version, for tests that build the database an older flowlog left. */
  schemaVersion?: number;
  /** Whether to migrate the database first (a second pool on a database the first migrated: no). */
  migrate?: boolean;
}

/**
 * A pool on the database FLOWLOG_DATABASE_URL names (D32), reachable and migrated before it is
 * returned, so a wrong URL or an unreachable server stops the start instead of the first request.
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<PostgresPool> {
  const pool = new UnavailableAwarePool({
    Client: UnavailableAwareClient,
    connectionString: checkedUrl(url),
    max: options.maxConnections,
    // pg waits forever by default: a server that drops packets would hang the start.
    connectionTimeoutMillis: 10_000,
    // Enforced by the server, so a statement ends even when the process that sent it does not live to.
    statement_timeout: options.statementTimeoutMs,
    types: { getTypeParser },
  });
  // An idle connection the server closed (a restart, a failover) is dropped by the pool, which opens a
  // new one for the next query; unhandled, the event would end the process.
  pool.on("error", () => undefined);
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end();
    throw new DatabaseUrlError(url, `cannot connect: ${reason(error)}`);
  }
  try {
    if (options.migrate ?? true) await migrate(client, options.schemaVersion);
  } catch (error) {
    client.release();
    await pool.end();
    throw error;
  }
  client.release();
  return pool;
}

/**
 * Runs `work` in a transaction on one connection of the pool. A connection whose rollback fails (it
 * broke mid-way) is discarded instead of going back to the pool.
 */
export function withTransaction<T>(
  pool: PostgresPool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return inTransaction(pool, "BEGIN", work);
}

/** Runs `work` on `client` reading one snapshot of the database throughout, as SQLite's read transactions do. */
export async function readSnapshot<T>(client: pg.PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    const result = await work();
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

async function inTransaction<T>(
  pool: PostgresPool,
  begin: string,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query("COMMIT");
    client.release();
    return result;
  } catch (error) {
    const rolledBack = await client.query("ROLLBACK").then(
      () => true,
      () => false,
    );
    client.release(!rolledBack);
    throw error;
  }
}

/** A read of a tenant's data that ran past its time: the message says how long it may take. */
export type OverTime = (limitMs: number) => Error;

/**
 * Runs `work` on a connection of `pool` for a caller who may leave (`signal`) and within `limitMs` (D46).
 * Either way the statement running is cancelled at once on the server (pg_cancel_backend, sent through
 * `canceller`, another pool), and the connection is closed rather than handed to the next caller. Past
 * the limit, `overTime` says what to narrow; a caller who left gets the signal's reason, though nobody
 * will read it. The server's statement_timeout stays the backstop for a process that dies mid-read.
 */
export async function cancellableRead<T>(
  pool: PostgresPool,
  canceller: Queryable,
  read: { signal: AbortSignal | undefined; limitMs: number; overTime: OverTime },
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  read.signal?.throwIfAborted();
  const client = await pool.connect();
  // The caller may have left while a connection was awaited: nothing has run on it, so it goes back.
  if (read.signal?.aborted) {
    client.release();
    throw read.signal.reason;
  }
  // pg keeps the server process id from the connection's start (BackendKeyData); its types omit it.
  const serverProcess = (client as unknown as { processID: number }).processID;
  let cancelled: Promise<unknown> | undefined;
  const cancel = () => {
    cancelled ??= canceller.query("SELECT pg_cancel_backend($1)", [serverProcess]).catch(() => undefined);
  };
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    cancel();
  }, read.limitMs);
  read.signal?.addEventListener("abort", cancel, { once: true });
  let failed = false;
  try {
    return await work(client);
  } catch (error) {
    failed = true;
    if (read.signal?.aborted) throw read.signal.reason;
    if (late || (error as { code?: unknown }).code === queryCanceled) throw read.overTime(read.limitMs);
    throw error;
  } finally {
    clearTimeout(timer);
    read.signal?.removeEventListener("abort", cancel);
    if (cancelled) await cancelled;
    // A connection that failed mid-read, or may yet be cancelled, is closed rather than reused.
    client.release(failed || cancelled !== undefined);
  }
}

/** SQLSTATE of a statement the server cancelled: its statement_timeout, or pg_cancel_backend. */
const queryCanceled = "57014";

/** The type of D44's transaction ids (log_entries.xid); pg's builtins predate it. */
const xid8 = 5069;

/**
 * bigint columns (times in Unix milliseconds, counts) and transaction ids come back as numbers, as from
 * SQLite, instead of pg's strings: every value flowlog stores is far inside 2^53.
 */
function getTypeParser(oid: number, format?: "text" | "binary") {
  if ((oid === pg.types.builtins.INT8 || oid === xid8) && format !== "binary") return Number;
  return pg.types.getTypeParser(oid, format);
}

function checkedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseUrlError(url, "is not a URL; expected postgres://user:password@host:5432/database");
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new DatabaseUrlError(url, "must be a postgres:// URL");
  }
  if (parsed.hostname === "" && !parsed.searchParams.has("host")) {
    throw new DatabaseUrlError(url, "names no host");
  }
  if (parsed.pathname.length <= 1) throw new DatabaseUrlError(url, "names no database");
  return url;
}

/**
 * The URL as it may be shown: its password, in the user part or as a parameter, replaced by ***. Also
 * for a URL that does not parse: everything from the user's colon to the last @ goes, even if that is
 * more than the password.
 */
export function maskPassword(url: string): string {
  return url
    .replace(/^((?:[a-z][a-z0-9+.-]*:\/\/)?[^/?#@:]*):(?!\/\/).*@/i, "$1:***@")
    .replace(/(\bpassword=)[^&#\s]*/gi, "$1***");
}

/**
 * What went wrong connecting: pg reports a refused connection to a name with several addresses
 * (localhost: ::1 and 127.0.0.1) as an AggregateError whose own message is empty.
 */
function reason(error: unknown): string {
  if (error instanceof StoreUnavailableError) return reason(error.cause);
  if (error instanceof AggregateError && error.errors.length > 0) return reason(error.errors[0]);
  return error instanceof Error && error.message !== "" ? error.message : String(error);
}

/**
 * SQLSTATEs of a server that went away or will not take the connection: class 08 (connection
 * exception), an operator's or a crash's shutdown, a server still starting, no connection slot free.
 */
const unavailableStates = /^(08...|57P0[123]|53300)$/;
/** Socket errors of a server that cannot be reached. */
const unreachableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Whether `error` says the database could not be reached rather than that the statement was wrong:
 * pg reports a connection the server closed, or one that never opened in time, by message only.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isUnavailable);
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (unavailableStates.test(code) || unreachableCodes.has(code))) return true;
  return /^Connection terminated|^timeout exceeded when trying to connect|not queryable/.test(error.message);
}

function rethrowUnavailable(error: unknown): never {
  throw isUnavailable(error) ? new StoreUnavailableError({ cause: error }) : error;
}

/**
 * A pool whose statements and connections fail with StoreUnavailableError when the server cannot be
 * reached (issue 15: 503 for the API, a retry for an activity); the pool drops the broken connection
 * and opens a new one for the next request, so service resumes by itself when the server is back.
 * Promise calls only: callbacks are not translated (flowlog uses none).
 */
class UnavailableAwarePool extends pg.Pool {
  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this forwards them all.
  override query(...args: unknown[]): any {
    const result = (super.query as (...forwarded: unknown[]) => unknown)(...args);
    return result instanceof Promise ? result.catch(rethrowUnavailable) : result;
  }

  // biome-ignore lint/suspicious/noExplicitAny: as above, for connect's promise and callback forms.
  override connect(...args: unknown[]): any {
    const result = (super.connect as (...forwarded: unknown[]) => unknown)(...args);
    return result instanceof Promise ? result.catch(rethrowUnavailable) : result;
  }
}

/**
 * The connections of that pool: a statement inside a transaction fails the same way. A connection
 * that dies while checked out (in a transaction) emits `error`, which unheard would end the process;
 * its statement's promise already carries the failure, and a later one finds it not queryable.
 */
class UnavailableAwareClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on("error", () => undefined);
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this forwards them all.
  override query(...args: unknown[]): any {
    const result = (super.query as (...forwarded: unknown[]) => unknown)(...args);
    return result instanceof Promise ? result.catch(rethrowUnavailable) : result;
  }
}
