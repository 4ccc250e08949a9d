import pg from "pg";
import { SharedWriteWatch, type WriteWatch } from "../write-watch.js";
import type { PostgresPool } from "./database.js";

/** The channel every transaction that writes log entries notifies, with its xid (execution-insert.ts). */
export const logWritesChannel = "flowlog_log_writes";

/**
 * How often the watch calls its listeners without a notification: a notification lost while the
 * listening connection was down, or a write whose entries an older transaction still held back when its
 * notification came, is then found this much later at most.
 */
const catchUpMs = 2_000;

/** How long a lost listening connection waits before it connects again. */
const reconnectMs = 1_000;

/**
 * D44 on PostgreSQL: one connection of the process LISTENs while a tail is open, whatever the number of
 * tails; each write's NOTIFY, sent when its transaction commits, calls the listeners with the writing
 * transaction's xid. A periodic call besides makes a lost notification a delay, never a loss.
 */
export function notificationWatch(pool: PostgresPool): WriteWatch {
  return new SharedWriteWatch((changed) => {
    let client: pg.Client | undefined;
    let stopped = false;
    let retry: NodeJS.Timeout | undefined;
    const connect = async () => {
      const listening = new pg.Client({ connectionString: pool.options.connectionString });
      listening.on("notification", (notice) => changed(notice.payload));
      listening.on("error", () => lost(listening));
      listening.on("end", () => lost(listening));
      try {
        await listening.connect();
        await listening.query(`LISTEN ${logWritesChannel}`);
      } catch {
        lost(listening);
        return;
      }
      if (stopped) {
        void listening.end().catch(() => undefined);
        return;
      }
      client = listening;
      // What was written while no connection listened.
      changed();
    };
    const lost = (listening: pg.Client) => {
      if (client === listening) client = undefined;
      void listening.end().catch(() => undefined);
      if (stopped || retry) return;
      retry = setTimeout(() => {
        retry = undefined;
        void connect();
      }, reconnectMs);
      retry.unref();
    };
    const catchUp = setInterval(() => changed(), catchUpMs);
    catchUp.unref();
    void connect();
    return () => {
      stopped = true;
      clearInterval(catchUp);
      clearTimeout(retry);
      void client?.end().catch(() => undefined);
      client = undefined;
    };
  });
}
