import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedWorkspace } from "../src/seed/seed.js";
import { createAccount, type TestAccount } from "./support/flowlog.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";
import { openTestStore, type TestStore } from "./support/test-store.js";

/**
 * D46 on PostgreSQL (issue 49): one tenant's slow reads cannot take a replica down for everyone. Lists
 * (entries, deliveries, workflows) and stats run on a pool of their own under a statement timeout, stats at most 2 at once per user and 4
 * per process, and a read whose client leaves is cancelled on the server. A read is made slow here the
 * way a heavy one is in production, by holding it on the server: a session keeps an exclusive lock on a
 * table it needs (log_entry_models for the stats' second statement, log_entries for the list) until the
 * test lets go, while single entries, keys and token buckets stay readable.
 */

let testStore: TestStore;
let server: ServeProcess;
let free: TestAccount;
let other: TestAccount;
let otherEntryId: string;
let locker: pg.Client;

const statementTimeoutMs = 1_500;

beforeAll(async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-tenant-reads-"));
  testStore = await openTestStore(dataDir);
  const { store } = testStore;
  free = await createAccount(store, "free");
  other = await createAccount(store, "enterprise");
  await seedWorkspace(store, {
    workspaceId: free.workspaceId,
    executions: 200,
    days: 7,
    seed: "tenant-reads",
  });
  await seedWorkspace(store, {
    workspaceId: other.workspaceId,
    executions: 20,
    days: 7,
    seed: "tenant-reads-2",
  });
  const [entry] = await testStore.sql<{ id: string }>(
    "SELECT id FROM log_entries WHERE workspace_id = @workspaceId LIMIT 1",
    { workspaceId: other.workspaceId },
  );
  otherEntryId = entry?.id as string;
  server = await startServeProcess({
    ...testStore.env,
    FLOWLOG_QUOTAS: JSON.stringify({ reads: { statementTimeoutMs } }),
  });
  locker = new pg.Client({ connectionString: testStore.env.FLOWLOG_DATABASE_URL });
  await locker.connect();
});

afterAll(async () => {
  await locker?.end();
  await server?.stop();
  await testStore?.store.close();
});

/** Runs `test` while `table` is locked against every read, then lets go. */
async function whileLocked<T>(table: string, test: () => Promise<T>): Promise<T> {
  await locker.query("BEGIN");
  await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  try {
    return await test();
  } finally {
    await locker.query("ROLLBACK");
  }
}

const statsPath = (account: TestAccount) => `/api/v1/log-stats?workspaceId=${account.workspaceId}`;

function get(account: TestAccount, pathAndQuery: string, signal?: AbortSignal) {
  return fetch(`${server.url}${pathAndQuery}`, { headers: { "x-api-key": account.key }, signal });
}

/** Reads waiting now for the lock on `table`: statements running on the server, as its own lock table shows. */
async function runningOn(table: string): Promise<number> {
  const { rows } = await locker.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_locks WHERE relation = $1::regclass AND NOT granted",
    [table],
  );
  return rows[0]?.n ?? 0;
}

describe("one tenant's slow reads on PostgreSQL (D46)", () => {
  it("a free key's burst of 19 stats calls gets 2 run and the rest 429, while another tenant's GetLog answers within 1 s", async () => {
    await whileLocked("log_entry_models", async () => {
      const burst = new AbortController();
      const calls = Array.from({ length: 19 }, () =>
        get(free, statsPath(free), burst.signal).then(
          (answer) => ({ status: answer.status, retryAfter: answer.headers.get("retry-after") }),
          () => ({ status: 0, retryAfter: null }),
        ),
      );
      // The refusals come at once; the two admitted calls hang on the lock.
      await expect.poll(() => runningOn("log_entry_models")).toBe(2);
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const answer = await get(other, `/api/v1/logs/${otherEntryId}`);
        expect(answer.status).toBe(200);
        expect(performance.now() - started).toBeLessThan(1_000);
      }
      // Another tenant's stats take one of the process's other slots.
      const otherStats = get(other, statsPath(other));
      await expect.poll(() => runningOn("log_entry_models")).toBe(3);
      burst.abort();
      const answers = await Promise.all(calls);
      const refused = answers.filter((answer) => answer.status === 429);
      expect(refused).toHaveLength(17);
      for (const answer of refused) expect(answer.retryAfter).toMatch(/^\d+$/);
      // The two whose client left are cancelled on the server, not left reading.
      await expect.poll(() => runningOn("log_entry_models")).toBe(1);
      // Wrapped, so that the lock is let go before it is awaited.
      return { otherStats };
    }).then(async ({ otherStats }) => expect((await otherStats).status).toBe(200));
  });

  it("a stats call whose client leaves is cancelled on the server at once", async () => {
    await whileLocked("log_entry_models", async () => {
      const leaving = new AbortController();
      const call = get(other, statsPath(other), leaving.signal).catch(() => undefined);
      await expect.poll(() => runningOn("log_entry_models")).toBe(1);
      leaving.abort();
      await call;
      await expect.poll(() => runningOn("log_entry_models"), { timeout: 2_000 }).toBe(0);
    });
  });

  it("a list that reads past the statement timeout is refused with 504 naming what to narrow", async () => {
    const answer = await whileLocked("log_entries", () =>
      get(other, `/api/v1/logs?workspaceId=${other.workspaceId}&limit=10`),
    );
    expect(answer.status).toBe(504);
    const body = JSON.stringify(await answer.json());
    expect(body).toContain("deadline_exceeded");
    expect(body).toContain("startDate and endDate");
  });

  it("the delivery log and the workflow list that read past the statement timeout are refused with 504", async () => {
    for (const [table, path, narrow] of [
      ["deliveries", "deliveries", "filter by subscription"],
      ["workflows", "workflows", "filter it by folder"],
    ] as const) {
      const answer = await whileLocked(table, () =>
        get(other, `/api/v1/workspaces/${other.workspaceId}/${path}`),
      );
      expect(answer.status, table).toBe(504);
      const body = JSON.stringify(await answer.json());
      expect(body).toContain("deadline_exceeded");
      expect(body).toContain(narrow);
    }
  });
});
