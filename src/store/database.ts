import { mkdirSync } from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { sha256 } from "../util/sha256.js";
import { migrate } from "./migrations.js";
import { storedEntryWords } from "./search-words.js";
import { openSqlite } from "./sqlite-addon.js";

export type Db = Database.Database;

/**
 * Opens flowlog's SQLite file (D23): WAL so readers never wait for the writer, synchronous=FULL so an
 * acknowledged write survives a killed process or a power cut, a busy timeout so processes sharing the
 * file (API server, worker, CLI) queue instead of failing, and the schema migrated before first use
 * (tests may stop at an older `schemaVersion`).
 */
export function openDatabase(file: string, schemaVersion?: number): Db {
  if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
  const db = openSqlite(file);
  useWal(db);
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  // The key of a stored workflow state (issue 15); statements and migrations compute it alike.
  db.function("sha256", { deterministic: true }, (text) => sha256(String(text)));
  // D45: the words an existing entry is indexed under, for the migration that builds the index.
  db.function("search_words", { deterministic: true }, (name, spans, output) =>
    storedEntryWords(name as string | null, spans as string, output as string | null).join(" "),
  );
  migrate(db, schemaVersion);
  return db;
}

/** How long a connection waits for another process's lock before it answers SQLITE_BUSY. */
const busyTimeoutMs = 5_000;

/**
 * Sets the busy timeout, then switches the connection to WAL. Processes opening a new file together may
 * each hold the read lock that the switch must upgrade; SQLite then answers one of them SQLITE_BUSY at
 * once, without waiting out the busy timeout, since waiting could deadlock. That one tries again
 * shortly, for as long as the busy timeout would have waited. Opening is synchronous, so the pause
 * blocks: it happens only when processes start together on a new data dir.
 */
export function useWal(db: Db): void {
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, 5 + Math.random() * 20);
    }
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * D23 as amended: runs a write whose loss in a power cut costs nothing worth an fsync (API token-bucket
 * state, key bookkeeping) at `synchronous=NORMAL`: in WAL mode its commit is not synced, the next
 * checkpoint or FULL commit syncs it with the rest. A killed process still loses nothing (the WAL is in
 * the OS's cache); a power cut can only refill a bucket a little. Everything else stays FULL.
 */
export function writerWithoutFsync(db: Db): <T>(write: () => T) => T {
  // Not prepared once: SQLite applies this pragma when the statement is compiled, not when it runs.
  return (write) => {
    db.pragma("synchronous = NORMAL");
    try {
      return write();
    } finally {
      db.pragma("synchronous = FULL");
    }
  };
}

export function databaseFile(dataDir: string): string {
  return path.join(dataDir, "flowlog.sqlite");
}

/**
 * The first row a write's `RETURNING` clause gives, the statement stepped to its end. better-sqlite3's
 * `get()` stops after the first row and commits when it resets the statement, and SQLite runs a WAL file's
 * automatic checkpoint only for a statement that steps to its end: a file written only through `get()`
 * (the state file, written by every API request's take) was never checkpointed, and its WAL grew by a page
 * per request without bound, 120 MB in a 12-second load, every write appended to a longer file.
 */
export function writtenRow<T>(statement: Database.Statement, params: object): T | undefined {
  return statement.all(params)[0] as T | undefined;
}
