import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { toPublicError } from "../src/errors/public-error.js";
import { type Db, useWal, writtenRow } from "../src/store/database.js";
import { GroupCommit } from "../src/store/group-commit.js";
import { openSqlite } from "../src/store/sqlite-addon.js";

let dir: string;
let file: string;
let db: Db;
let commits: GroupCommit;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "flowlog-group-commit-"));
  file = path.join(dir, "state.sqlite");
  db = openSqlite(file);
  useWal(db);
  db.exec("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)");
  commits = new GroupCommit(db);
});
afterAll(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  db.exec("DELETE FROM counter; INSERT INTO counter (id, n) VALUES (1, 0)");
});

const increment = () =>
  writtenRow<{ n: number }>(db.prepare("UPDATE counter SET n = n + 1 WHERE id = 1 RETURNING n"), {})?.n;
const failing = () => {
  increment();
  throw new Error("this write fails");
};
const count = () => (db.prepare("SELECT n FROM counter WHERE id = 1").get() as { n: number }).n;
/** The count as another connection reads it: what has been committed. */
const committedCount = () => {
  const other = openSqlite(file, { readonly: true });
  try {
    return (other.prepare("SELECT n FROM counter WHERE id = 1").get() as { n: number }).n;
  } finally {
    other.close();
  }
};

describe("GroupCommit: the writes of one turn of the event loop, in one transaction (issue 13)", () => {
  it("runs the writes asked for in one turn in the order asked, each seeing the one before", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => commits.run(increment)));
    expect(results).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(count()).toBe(10);
  });

  it("answers each write by its own outcome: one that fails is refused alone and its writes undone", async () => {
    const group = [
      commits.run(increment),
      commits.run(increment),
      commits.run(failing),
      commits.run(increment),
    ];
    const settled = await Promise.allSettled(group);
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value : String(s.reason)))).toEqual([
      1,
      2,
      "Error: this write fails",
      3,
    ]);
    // The failing write's own increment was rolled back with it; its neighbours' are kept.
    expect(count()).toBe(3);
  });

  it("groups the writes asked for by separate callbacks of one turn, as a busy server's requests from several sockets", async () => {
    // Two immediates queued together run in one turn, with the microtask queue drained between them.
    const asked = await new Promise<Promise<unknown>[]>((resolve) => {
      const promises: Promise<unknown>[] = [];
      setImmediate(() => promises.push(commits.run(increment)));
      setImmediate(() => {
        // What another connection sees while this write runs: only what is committed.
        promises.push(commits.run(() => ({ n: increment(), committed: committedCount() })));
        resolve(promises);
      });
    });
    expect(await Promise.all(asked)).toEqual([
      1,
      // One transaction: the first callback's increment was not yet committed when the second write ran.
      { n: 2, committed: 0 },
    ]);
    expect(count()).toBe(2);
  });

  it("a later turn's writes are a group of their own, and a failure in it leaves the earlier group's writes", async () => {
    expect(await Promise.all([commits.run(increment), commits.run(increment)])).toEqual([1, 2]);
    const settled = await Promise.allSettled([commits.run(failing), commits.run(increment)]);
    expect(settled.map((s) => s.status)).toEqual(["rejected", "fulfilled"]);
    expect(count()).toBe(3);
    expect(await commits.run(increment)).toBe(4);
  });

  it("a group that cannot have the write lock fails whole, and the next one commits once the lock is free", async () => {
    const other = openSqlite(file);
    db.pragma("busy_timeout = 50");
    try {
      other.exec("BEGIN IMMEDIATE");
      const settled = await Promise.allSettled([commits.run(increment), commits.run(increment)]);
      expect(
        settled.map((s) => (s.status === "rejected" ? (s.reason as { code?: string }).code : s.status)),
      ).toEqual(["SQLITE_BUSY", "SQLITE_BUSY"]);
      // The API answers such a take 503, to be retried, and names nothing of the database (D10).
      const busy = toPublicError((settled[0] as PromiseRejectedResult).reason, "take");
      expect([busy.code, busy.rawMessage]).toEqual([Code.Unavailable, "the database is busy; retry shortly"]);
      other.exec("COMMIT");
      expect(count()).toBe(0);
      expect(await Promise.all([commits.run(increment), commits.run(increment)])).toEqual([1, 2]);
    } finally {
      other.close();
      db.pragma("busy_timeout = 5000");
    }
  });
});
