import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { migrate } from "./migrations.js";

export type Db = Database.Database;

/**
 * Opens flowlog's SQLite file (D23): WAL so readers never wait for the writer, synchronous=FULL so an
 * acknowledged write survives a killed process or a power cut, a busy timeout so processes sharing the
 * file (API server, worker, CLI) queue instead of failing, and the schema migrated before first use.
 */
export function openDatabase(file: string): Db {
  if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  migrate(db);
  return db;
}

export function databaseFile(dataDir: string): string {
  return path.join(dataDir, "flowlog.sqlite");
}
