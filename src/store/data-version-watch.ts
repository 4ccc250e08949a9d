import { openSqlite } from "./sqlite-addon.js";
import { SharedWriteWatch, type WriteWatch } from "./write-watch.js";

/** How often the file's change counter is read: a few microseconds each, a tenth of the tail's p50 goal. */
const pollMs = 20;

/**
 * D44 on SQLite: a commit by any connection to the file, in any process, changes `PRAGMA data_version`
 * as another connection sees it. One read-only connection of the process reads it every `pollMs` while
 * a tail is open, whatever the number of tails.
 */
export function dataVersionWatch(file: string): WriteWatch {
  return new SharedWriteWatch((changed) => {
    if (file === ":memory:") {
      throw new Error("a tail needs the database in a file: no other connection sees :memory:");
    }
    const db = openSqlite(file, { readonly: true, fileMustExist: true });
    const version = db.prepare("PRAGMA data_version").pluck();
    let seen = version.get();
    const timer = setInterval(() => {
      const now = version.get();
      if (now === seen) return;
      seen = now;
      changed();
    }, pollMs);
    timer.unref();
    return () => {
      clearInterval(timer);
      db.close();
    };
  });
}
