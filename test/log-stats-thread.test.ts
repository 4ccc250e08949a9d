import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toPublicError } from "../src/errors/public-error.js";
import { QueryTimeoutError } from "../src/errors/query-timeout.js";
import { seedWorkspace } from "../src/seed/seed.js";
import { databaseFile } from "../src/store/database.js";
import type { HourRange } from "../src/store/log-stats-sql.js";
import { LogStatsThreads } from "../src/store/log-stats-thread.js";
import { openStore, type Store } from "../src/store/store.js";
import { newId } from "../src/util/ids.js";

/**
 * Issue 17, GetLogStats on SQLite: a month of a busy workspace reads for seconds, and better-sqlite3
 * blocks the thread it runs on. The stats run on a thread of their own with a read-only connection, so
 * the API's thread goes on answering, and a read past its time is refused instead of holding on.
 */
let dataDir: string;
let store: Store;
let workspaceId: string;
const hour = 3_600_000;
const end = Math.ceil(Date.now() / hour) * hour;
const range: HourRange = { start: end - 31 * 24 * hour, end };

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-stats-thread-"));
  store = openStore({ dataDir });
  const now = Date.now();
  const userId = newId("usr");
  workspaceId = newId("ws");
  await store.accounts.createUser({ id: userId, email: "stats@example.test", plan: "pro", createdAt: now });
  await store.accounts.createWorkspace({ id: workspaceId, name: "stats", createdAt: now }, [userId]);
  await seedWorkspace(store, { workspaceId, executions: 2_000, days: 30, seed: "stats-thread" });
});

afterAll(async () => {
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the log stats on SQLite", () => {
  it("run off the API's thread: its event loop turns while they read", async () => {
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const stats = await store.logs.stats({ workspaceId }, range);
    // Read on this thread, the answer would be ready before the loop's next turn.
    expect(turned).toBe(true);
    expect(stats.hours).toHaveLength(31 * 24);
    expect(stats.hours.reduce((sum, h) => sum + h.executions, 0)).toBe(2_000);
  });

  it("see what the API's connection committed a moment before", async () => {
    const before = await store.logs.stats({ workspaceId }, range);
    await seedWorkspace(store, { workspaceId, executions: 10, days: 1, seed: "stats-thread-more" });
    const after = await store.logs.stats({ workspaceId }, range);
    const count = (stats: typeof before) => stats.hours.reduce((sum, h) => sum + h.executions, 0);
    expect(count(after)).toBe(count(before) + 10);
  });

  it("leave a process free to end once answered, though nobody closed the thread", async () => {
    const thread = new URL("../src/store/log-stats-thread.ts", import.meta.url).href;
    const script = `
      const { LogStatsThreads } = await import(${JSON.stringify(thread)});
      const stats = await new LogStatsThreads(${JSON.stringify(databaseFile(dataDir))})
        .stats({ workspaceId: ${JSON.stringify(workspaceId)} }, ${JSON.stringify(range)});
      console.log(stats.hours.length);`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { timeout: 30_000 },
    );
    expect(stdout.trim()).toBe(String(31 * 24));
  });

  it("refuse a read past its time, naming what to narrow, as 504 deadline_exceeded", async () => {
    const impatient = new LogStatsThreads(databaseFile(dataDir), { timeoutMs: 1, threads: 1 });
    try {
      const refusal = await impatient.stats({ workspaceId }, range).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(QueryTimeoutError);
      const answer = toPublicError(refusal, "GetLogStats");
      expect(answer.code).toBe(Code.DeadlineExceeded);
      expect(answer.rawMessage).toMatch(/narrow the range \(startDate, endDate\)/);
    } finally {
      await impatient.close();
    }
  });

  it("drop a read whose caller left while it waited for a thread, and answer the one before it", async () => {
    const one = new LogStatsThreads(databaseFile(dataDir), { timeoutMs: 30_000, threads: 1 });
    try {
      const left = new AbortController();
      const first = one.stats({ workspaceId }, range);
      const second = one.stats({ workspaceId }, range, left.signal);
      left.abort(new Error("the client left"));
      await expect(second).rejects.toThrow("the client left");
      expect((await first).hours).toHaveLength(31 * 24);
    } finally {
      await one.close();
    }
  });

  it("end the read of a caller who left mid-read, and serve the next on a new thread", async () => {
    const one = new LogStatsThreads(databaseFile(dataDir), { timeoutMs: 30_000, threads: 1 });
    try {
      const left = new AbortController();
      const reading = one.stats({ workspaceId }, range, left.signal);
      left.abort(new Error("the client left"));
      await expect(reading).rejects.toThrow("the client left");
      expect((await one.stats({ workspaceId }, range)).hours).toHaveLength(31 * 24);
    } finally {
      await one.close();
    }
  });

  it("refuse a read whose caller already left without starting it", async () => {
    const left = AbortSignal.abort(new Error("the client left"));
    await expect(store.logs.stats({ workspaceId }, range, left)).rejects.toThrow("the client left");
  });
});
