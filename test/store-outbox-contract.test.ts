import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FanOutIntent, OutboxStore } from "../src/store/outbox-store.js";
import { PostgresOutboxStore } from "../src/store/postgres/outbox-store.js";
import type { StoreArea } from "../src/store/store.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { type ContractDatabase, storeKinds } from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

type Outbox = StoreArea<OutboxStore>;

const kinds = storeKinds<Outbox>(
  { sqlite: (db) => new OutboxStore(db), postgres: (pool) => new PostgresOutboxStore(pool) },
  () => server,
);

const t0 = Date.parse("2026-11-01T10:00:00.000Z");
const leaseMs = 30_000;

function intent(n: number): FanOutIntent {
  // D50: the execution span's trace context, kept for its notifications; none when it was not traced.
  const traced = n % 3 === 1;
  return {
    logId: `log_${n}`,
    workspaceId: "ws_outbox",
    workflowId: `wf_${n % 3}`,
    taskQueue: "deliveries",
    traceparent: traced ? `00-${"4bf92f35".repeat(4)}-${String(n).padStart(16, "0")}-01` : null,
    tracestate: traced ? "vendor=t61rcWkgMzE" : null,
  };
}

describe.each(kinds)("the notification outbox on %s (issue 12, D32)", (_, open) => {
  let db: ContractDatabase<Outbox>;
  let outbox: Outbox;
  beforeEach(async () => {
    db = await open();
    outbox = db.areas;
  });
  afterEach(() => db.close());

  /** Writes an intent as a new log entry's transaction does, due at `notBefore`. */
  async function add(n: number, notBefore: number) {
    await db.query(
      `INSERT INTO notification_outbox
         (log_id, workspace_id, workflow_id, task_queue, trace_parent, trace_state, created_at, not_before)
       VALUES (@logId, @workspaceId, @workflowId, @taskQueue, @traceparent, @tracestate, @notBefore, @notBefore)`,
      { ...intent(n), notBefore },
    );
  }
  const logIds = (intents: FanOutIntent[]) => intents.map((i) => i.logId).sort();

  it("is empty: nothing due, nothing held, nothing to claim", async () => {
    expect(await outbox.nextDue()).toBeUndefined();
    expect(await outbox.holds("log_1")).toBe(false);
    expect(await outbox.claim(t0, leaseMs, 10)).toEqual([]);
  });

  it("claims the intents whose time has come, earliest first, up to the limit, with what they hold", async () => {
    await add(1, t0 - 300);
    await add(2, t0 - 100);
    await add(3, t0 - 200);
    await add(4, t0 + 1);
    expect(await outbox.nextDue()).toBe(t0 - 300);
    const claimed = await outbox.claim(t0, leaseMs, 2);
    expect(claimed.sort((a, b) => a.logId.localeCompare(b.logId))).toEqual([intent(1), intent(3)]);
    expect(logIds(await outbox.claim(t0, leaseMs, 10))).toEqual(["log_2"]);
  });

  it("holds a claimed intent for its lease, then lets another dispatcher claim it", async () => {
    await add(1, t0);
    expect(logIds(await outbox.claim(t0, leaseMs, 10))).toEqual(["log_1"]);
    expect(await outbox.holds("log_1")).toBe(true);
    expect(await outbox.nextDue()).toBe(t0 + leaseMs);
    expect(await outbox.claim(t0 + leaseMs - 1, leaseMs, 10)).toEqual([]);
    expect(logIds(await outbox.claim(t0 + leaseMs, leaseMs, 10))).toEqual(["log_1"]);
  });

  it("a removed intent is done: no longer held, never claimed again", async () => {
    await add(1, t0);
    await outbox.claim(t0, leaseMs, 10);
    await outbox.remove("log_1");
    expect(await outbox.holds("log_1")).toBe(false);
    expect(await outbox.nextDue()).toBeUndefined();
    expect(await outbox.claim(t0 + 10 * leaseMs, leaseMs, 10)).toEqual([]);
  });

  it("a postponed intent waits until its new time", async () => {
    await add(1, t0);
    await outbox.claim(t0, leaseMs, 10);
    await outbox.postpone("log_1", t0 + 5_000);
    expect(await outbox.nextDue()).toBe(t0 + 5_000);
    expect(await outbox.claim(t0 + 4_999, leaseMs, 10)).toEqual([]);
    expect(logIds(await outbox.claim(t0 + 5_000, leaseMs, 10))).toEqual(["log_1"]);
  });

  it("dispatchers claiming at once, each on its own connection, start every intent exactly once", async () => {
    const count = 300;
    await db.query(
      `INSERT INTO notification_outbox (log_id, workspace_id, workflow_id, task_queue, created_at, not_before)
       ${Array.from({ length: count }, (_, n) => `SELECT 'log_${n}', 'ws', 'wf', 'q', ${t0}, ${t0 - n}`).join(" UNION ALL ")}`,
    );
    const dispatchers = await Promise.all(Array.from({ length: 6 }, () => db.connect()));
    const claimedBy = await Promise.all(
      dispatchers.map(async (dispatcher) => {
        const claimed: string[] = [];
        for (;;) {
          const batch = await dispatcher.claim(t0, leaseMs, 7);
          if (batch.length === 0) return claimed;
          claimed.push(...batch.map((i) => i.logId));
        }
      }),
    );
    const all = claimedBy.flat();
    expect(all).toHaveLength(count);
    expect(new Set(all).size).toBe(count);
  });
});
