import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../src/store/database.js";
import { LogsStore } from "../src/store/logs-store.js";
import { PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import { PostgresRateLimitStore } from "../src/store/postgres/rate-limit-store.js";
import { PostgresUsageStore } from "../src/store/postgres/usage-store.js";
import { RateLimitStore } from "../src/store/rate-limit-store.js";
import { openStateDatabase } from "../src/store/state-database.js";
import type { StoreArea } from "../src/store/store.js";
import { UsageStore } from "../src/store/usage-store.js";
import { execution } from "./support/flowlog.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { type ContractDatabase, storeKinds } from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

interface Areas {
  rateLimits: StoreArea<RateLimitStore>;
  usage: StoreArea<UsageStore>;
  logs: StoreArea<LogsStore>;
}

/** The state files' connections (the API's buckets on SQLite, issue 13), closed with each database. */
const stateConnections: Db[] = [];
function stateOf(db: Db): Db {
  const state = openStateDatabase(db.name);
  stateConnections.push(state);
  return state;
}

const kinds = storeKinds<Areas>(
  {
    sqlite: (db) => ({
      rateLimits: new RateLimitStore(db, stateOf(db)),
      usage: new UsageStore(db),
      logs: new LogsStore(db),
    }),
    postgres: (pool) => ({
      rateLimits: new PostgresRateLimitStore(pool),
      usage: new PostgresUsageStore(pool),
      logs: new PostgresLogsStore(pool),
    }),
  },
  () => server,
);

const t0 = Date.parse("2026-11-01T10:00:00.000Z");
/** 10 a minute, 3 at once: a token every 6 s. */
const shape = { requestsPerMinute: 10, maxBurst: 3 };

describe.each(kinds)("token buckets and usage on %s (D11, D12, D32)", (_, open) => {
  let db: ContractDatabase<Areas>;
  let areas: Areas;
  beforeEach(async () => {
    db = await open();
    areas = db.areas;
  });
  afterEach(async () => {
    for (const state of stateConnections.splice(0)) state.close();
    await db.close();
  });

  it("a new bucket is full; each take removes one whole token until none is left, then says when to retry", async () => {
    expect(await areas.rateLimits.peek("api:u1", shape, t0)).toEqual({ remaining: 3, resetAtMs: t0 });
    const takes = [];
    for (let n = 0; n < 4; n++) takes.push(await areas.rateLimits.take("api:u1", shape, t0));
    expect(takes.map((t) => [t.allowed, t.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(takes[3]).toMatchObject({ resetAtMs: t0 + 6000, retryAfterSeconds: 6 });
    expect(await areas.rateLimits.peek("api:u1", shape, t0)).toEqual({ remaining: 0, resetAtMs: t0 + 6000 });
    // Other keys are other buckets.
    expect(await areas.rateLimits.take("api:u2", shape, t0)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it("refills continuously, in any number of steps, up to the burst and no further", async () => {
    for (let n = 0; n < 3; n++) await areas.rateLimits.take("k", shape, t0);
    // 6 s in four 1.5 s steps add up to one whole token.
    for (const at of [t0 + 1500, t0 + 3000, t0 + 4500]) {
      expect(await areas.rateLimits.take("k", shape, at)).toMatchObject({ allowed: false });
    }
    expect(await areas.rateLimits.take("k", shape, t0 + 6000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await areas.rateLimits.peek("k", shape, t0 + 600_000)).toEqual({
      remaining: 3,
      resetAtMs: t0 + 600_000,
    });
  });

  it("a clock behind the last writer's refills nothing and drains nothing", async () => {
    for (let n = 0; n < 3; n++) await areas.rateLimits.take("k", shape, t0);
    expect(await areas.rateLimits.take("k", shape, t0 - 60_000)).toMatchObject({
      allowed: false,
      remaining: 0,
    });
    expect(await areas.rateLimits.take("k", shape, t0 + 6000)).toMatchObject({ allowed: true });
  });

  // durable: false is the API's bucket, which SQLite keeps in its state file (D23 as amended).
  it.each([true, false])(
    "takes from two connections at once never hand out more than the bucket holds (durable: %s)",
    async (durable) => {
      const other = await db.connect();
      const big = { requestsPerMinute: 1, maxBurst: 20 };
      const takes = await Promise.all(
        Array.from({ length: 50 }, (_, n) =>
          (n % 2 ? other : areas).rateLimits.take("shared", big, t0, durable),
        ),
      );
      expect(takes.filter((t) => t.allowed)).toHaveLength(20);
      expect(await areas.rateLimits.peek("shared", big, t0, durable)).toMatchObject({ remaining: 0 });
    },
  );

  /** D38's pace: 10 a second, one at a time; at most 300 ms (3 places) owed. */
  const pace = { requestsPerMinute: 600, maxBurst: 1 };

  it("a paced queue gives each caller the next interval in turn, up to its bound, then says when a place opens", async () => {
    const places = [];
    for (let n = 0; n < 5; n++)
      places.push(await areas.rateLimits.reserve("endpoint-pace:s1", pace, 300, t0));
    expect(places).toEqual([
      { allowed: true, waitMs: 0 },
      { allowed: true, waitMs: 100 },
      { allowed: true, waitMs: 200 },
      { allowed: true, waitMs: 300 },
      { allowed: false, waitMs: 100 },
    ]);
    // 100 ms on, the first owed token has come: one more place, 300 ms away.
    expect(await areas.rateLimits.reserve("endpoint-pace:s1", pace, 300, t0 + 100)).toEqual({
      allowed: true,
      waitMs: 300,
    });
    // Idle, the pace saves up no more than one: two callers a second later are 100 ms apart again.
    const later = t0 + 2000;
    expect(await areas.rateLimits.reserve("endpoint-pace:s1", pace, 300, later)).toEqual({
      allowed: true,
      waitMs: 0,
    });
    expect(await areas.rateLimits.reserve("endpoint-pace:s1", pace, 300, later)).toEqual({
      allowed: true,
      waitMs: 100,
    });
  });

  it("callers on two connections at once never get the same interval, nor more places than the bound", async () => {
    const other = await db.connect();
    const places = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        (n % 2 ? other : areas).rateLimits.reserve("endpoint-pace:shared", pace, 1000, t0),
      ),
    );
    const allowed = places.filter((place) => place.allowed).map((place) => place.waitMs);
    expect(allowed.sort((a, b) => a - b)).toEqual(Array.from({ length: 11 }, (_, n) => n * 100));
    expect(places.filter((place) => !place.allowed)).toHaveLength(29);
  });

  it("usage shows both execution buckets and the cost of the calendar month (UTC) billed to the user", async () => {
    const account = { userId: "usr_usage", workspaceId: "ws_usage", key: "", keyId: "" };
    const october = Date.parse("2026-10-31T23:59:59.999Z");
    const november = Date.parse("2026-11-01T00:00:00.000Z");
    const costs: [number, number][] = [
      [october, 5],
      [november, 0.1],
      [november + 3_600_000, 0.2],
      [november + 7_200_000, 0.000000001],
    ];
    await areas.logs.insertExecutions(
      costs.map(([startedAt, total]) => {
        const record = execution(account, "wf_usage", { startedAt });
        record.entry.cost = { ...record.entry.cost, total };
        return record;
      }),
    );
    // Someone else's executions are not this user's usage.
    await areas.logs.insertExecution(
      execution({ ...account, userId: "usr_other" }, "wf_usage", { startedAt: november }),
    );
    await areas.rateLimits.take("sync:usr_usage", shape, t0);
    const sync = { key: "sync:usr_usage", shape };
    const async = { key: "async:usr_usage", shape: { requestsPerMinute: 50, maxBurst: 15 } };
    const snapshot = await areas.usage.snapshot({ userId: "usr_usage", nowMs: t0, sync, async });
    expect(snapshot).toEqual({
      periodCost: 0.300000001,
      sync: { tokens: 2, asOf: t0 },
      async: { tokens: 15, asOf: t0 },
    });
    const lastMonth = await areas.usage.snapshot({ userId: "usr_usage", nowMs: october, sync, async });
    expect(lastMonth.periodCost).toBe(5);
  });
});
