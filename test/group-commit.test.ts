import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Db, useWal, writtenRow } from "../src/store/database.js";
import { GroupCommit } from "../src/store/group-commit.js";

let dir: string;
let file: string;
let db: Db;
let commits: GroupCommit;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "flowlog-group-commit-"));
  file = path.join(dir, "state.sqlite");
  db = new Database(file);
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

describe("GroupCommit: the writes of one turn of the event loop, in one transaction (issue 13)", () => {
  it("runs the writes asked for in one turn in the order asked, each seeing the one before", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => commits.run(increment)));
    expect(results).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(count()).toBe(10);
  });

  it("commits them together: when one fails, every write of its turn fails and none is kept", async () => {
    const group = [commits.run(increment), commits.run(increment), commits.run(failing)];
    const settled = await Promise.allSettled(group);
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(settled.map((s) => (s.status === "rejected" ? String(s.reason) : ""))).toEqual(
      Array(3).fill("Error: this write fails"),
    );
    // Two increments ran before the failure: committed one by one, they would have stayed.
    expect(count()).toBe(0);
  });

  it("groups the writes asked for by separate callbacks of one turn, as a busy server's requests from several sockets", async () => {
    // Two immediates queued together run in one turn, with the microtask queue drained between them.
    const asked = await new Promise<Promise<unknown>[]>((resolve) => {
      const promises: Promise<unknown>[] = [];
      setImmediate(() => promises.push(commits.run(increment)));
      setImmediate(() => {
        promises.push(commits.run(failing));
        resolve(promises);
      });
    });
    const settled = await Promise.allSettled(asked);
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    expect(count()).toBe(0);
  });

  it("a later turn's writes are a group of their own: its failure leaves the earlier group's writes", async () => {
    expect(await Promise.all([commits.run(increment), commits.run(increment)])).toEqual([1, 2]);
    await expect(Promise.all([commits.run(increment), commits.run(failing)])).rejects.toThrow(
      "this write fails",
    );
    expect(count()).toBe(2);
    expect(await commits.run(increment)).toBe(3);
  });

  it("a group that cannot have the write lock fails whole, and the next one commits once the lock is free", async () => {
    const other = new Database(file);
    db.pragma("busy_timeout = 50");
    try {
      other.exec("BEGIN IMMEDIATE");
      const settled = await Promise.allSettled([commits.run(increment), commits.run(increment)]);
      expect(
        settled.map((s) => (s.status === "rejected" ? (s.reason as { code?: string }).code : s.status)),
      ).toEqual(["SQLITE_BUSY", "SQLITE_BUSY"]);
      other.exec("COMMIT");
      expect(count()).toBe(0);
      expect(await Promise.all([commits.run(increment), commits.run(increment)])).toEqual([1, 2]);
    } finally {
      other.close();
      db.pragma("busy_timeout = 5000");
    }
  });
});
