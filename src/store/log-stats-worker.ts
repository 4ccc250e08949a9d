import { parentPort } from "node:worker_threads";
import type Database from "better-sqlite3";
import {
  type HourRange,
  type HourRow,
  hourStatsSql,
  type LogStats,
  type ModelCostRow,
  modelCostsSql,
  type StatsFilter,
  statsOf,
} from "./log-stats-sql.js";
import { openSqlite } from "./sqlite-addon.js";
import { sqliteQuery } from "./sqlite-query.js";

/** One stats request, as the API process's thread posts it (log-stats-thread.ts). */
export interface StatsJob {
  id: number;
  file: string;
  filter: StatsFilter;
  range: HourRange;
}

export type StatsAnswer = { id: number; stats: LogStats } | { id: number; error: string };

/**
 * The log stats on SQLite, off the API's thread (issue 17): a 31-day range over a million entries reads
 * for seconds, and better-sqlite3 blocks the thread it runs on. This thread has its own read-only
 * connection (D23 keeps one writer per process; WAL lets readers beside it), so the API goes on answering.
 */
const connections = new Map<string, Database.Database>();

function connectionTo(file: string): Database.Database {
  let db = connections.get(file);
  if (!db) {
    db = openSqlite(file, { readonly: true, fileMustExist: true });
    db.pragma("busy_timeout = 5000");
    connections.set(file, db);
  }
  return db;
}

/** Both statements in one read transaction, so the hours and the costs count the same entries. */
function readStats({ file, filter, range }: StatsJob): LogStats {
  const db = connectionTo(file);
  const hours = sqliteQuery((bind) => hourStatsSql(filter, range, bind));
  const costs = sqliteQuery((bind) => modelCostsSql(filter, range, bind));
  return db.transaction(() =>
    statsOf(
      db.prepare(hours.sql).all(hours.params) as HourRow[],
      db.prepare(costs.sql).all(costs.params) as ModelCostRow[],
      range,
    ),
  )();
}

parentPort?.on("message", (job: StatsJob) => {
  let answer: StatsAnswer;
  try {
    answer = { id: job.id, stats: readStats(job) };
  } catch (error) {
    answer = { id: job.id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(answer);
});
