import path from "node:path";
import { type Db, useWal } from "./database.js";
import { applyMigrations } from "./migrations.js";
import { openSqlite } from "./sqlite-addon.js";

/**
 * The API's token buckets live in a file of their own beside the store's (D23 as amended: "or a separate
 * state file"). Every authenticated request writes one (D11), so the file is at `synchronous=NORMAL`: in
 * WAL mode a commit is not synced, a killed process still loses nothing, and a power cut can only refill
 * a bucket a little. A file of its own rather than a pragma switched per write on the store's connection:
 * the take costs no statement compilation, never queues behind the worker's log writes for the store's
 * write lock, and does not move the store's `data_version`, which the other processes' caches watch
 * (auth-cache.ts). It is still one file shared by every process on the machine, so the buckets are too.
 *
 * Nothing in it needs a backup: without the file every API bucket starts full.
 */
export function stateDatabaseFile(storeFile: string): string {
  const { dir, name } = path.parse(storeFile);
  return path.join(dir, `${name}-state.sqlite`);
}

const migrations = [
  `
  -- The API token buckets (D11), as rate_limit_buckets in the store file, which keeps the execution ones.
  CREATE TABLE rate_limit_buckets (
    key TEXT PRIMARY KEY,
    tokens REAL NOT NULL,
    updated_at INTEGER NOT NULL,
    last_allowed INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
];

/** Opens (and creates or migrates) the state file of the store at `storeFile`; the store's folder exists. */
export function openStateDatabase(storeFile: string): Db {
  const db = openSqlite(storeFile === ":memory:" ? ":memory:" : stateDatabaseFile(storeFile));
  useWal(db);
  db.pragma("synchronous = NORMAL");
  applyMigrations(db, migrations, "the state file");
  return db;
}
