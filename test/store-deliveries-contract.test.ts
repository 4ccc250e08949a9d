import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeliveriesStore } from "../src/store/deliveries-store.js";
import type {
  DeliveryAttemptRecord,
  DeliveryFilter,
  DeliveryKey,
  DeliveryStatus,
  NewDelivery,
} from "../src/store/delivery-rows.js";
import { type EndpointHealthArea, EndpointHealthStore } from "../src/store/endpoint-health-store.js";
import { type HoldsArea, HoldsStore } from "../src/store/holds-store.js";
import { PostgresDeliveriesStore } from "../src/store/postgres/deliveries-store.js";
import { PostgresEndpointHealthStore } from "../src/store/postgres/endpoint-health-store.js";
import { PostgresHoldsStore } from "../src/store/postgres/holds-store.js";
import type { StoreArea } from "../src/store/store.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import {
  addSubscription,
  type ContractDatabase,
  type OlderDatabase,
  olderStoreKinds,
  storeKinds,
} from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

interface Areas {
  deliveries: StoreArea<DeliveriesStore>;
  endpointHealth: EndpointHealthArea;
  holds: HoldsArea;
}

const kinds = storeKinds<Areas>(
  {
    sqlite: (db) => {
      const endpointHealth = new EndpointHealthStore(db);
      const holds = new HoldsStore(db);
      return { deliveries: new DeliveriesStore(db, endpointHealth, holds), endpointHealth, holds };
    },
    postgres: (pool) => {
      const endpointHealth = new PostgresEndpointHealthStore(pool);
      const holds = new PostgresHoldsStore(pool);
      return { deliveries: new PostgresDeliveriesStore(pool, endpointHealth, holds), endpointHealth, holds };
    },
  },
  () => server,
);

const workspaceId = "ws_deliveries";
const t0 = Date.parse("2026-11-01T10:00:00.000Z");
let sequence = 0;

function newDelivery(subscriptionId: string, overrides: Partial<NewDelivery> = {}): NewDelivery {
  sequence++;
  return {
    id: `dlv_${sequence}`,
    eventId: `evt_${sequence}`,
    eventType: "workflow.execution.completed",
    subscriptionId,
    workspaceId,
    logId: `log_${sequence}`,
    event: {
      id: `evt_${sequence}`,
      type: "workflow.execution.completed",
      timestamp: t0,
      data: { n: sequence },
    },
    createdAt: t0 + sequence,
    ...overrides,
  };
}

function attemptOf(
  deliveryId: string,
  outcome: DeliveryAttemptRecord["outcome"],
  overrides: Partial<DeliveryAttemptRecord> = {},
): DeliveryAttemptRecord {
  const failed = outcome !== "succeeded";
  return {
    deliveryId,
    series: 1,
    attempt: 1,
    startedAt: t0 + 60_000,
    durationMs: 250,
    outcome,
    httpStatus: failed ? 503 : 204,
    responseSnippet: failed ? "upstream unavailable" : null,
    error: failed ? "HTTP 503" : null,
    ...overrides,
  };
}

const statusOf: Record<DeliveryAttemptRecord["outcome"], DeliveryStatus> = {
  succeeded: "succeeded",
  retrying: "pending",
  failed: "failed",
};

describe.each(kinds)("the delivery log on %s (D19, D35, D32)", (kind, open) => {
  let db: ContractDatabase<Areas>;
  let deliveries: Areas["deliveries"];
  beforeEach(async () => {
    db = await open();
    deliveries = db.areas.deliveries;
    await addSubscription(db, { id: "sub_hook", workspaceId, url: "https://hooks.example.test/a" });
  });
  afterEach(() => db.close());

  /** Records the attempt with the status its outcome leaves; true when a failure was counted (D35). */
  const record = (attempt: DeliveryAttemptRecord, on = deliveries) =>
    on.recordAttempt(attempt, statusOf[attempt.outcome]);

  describe("one delivery per (event, subscription)", () => {
    it("is created pending, with the event kept exactly as given", async () => {
      const delivery = newDelivery("sub_hook");
      const created = await deliveries.createOnce(delivery);
      const expected = {
        ...delivery,
        status: "pending",
        attempts: 0,
        lastError: null,
        lastHttpStatus: null,
        updatedAt: delivery.createdAt,
      };
      expect(created).toEqual(expected);
      expect(await deliveries.get(delivery.id)).toEqual(expected);
    });

    it("created again, by a replayed fan-out, answers the first with its id and event", async () => {
      const first = newDelivery("sub_hook");
      await deliveries.createOnce(first);
      const again = await deliveries.createOnce({ ...newDelivery("sub_hook"), eventId: first.eventId });
      expect(again).toMatchObject({ id: first.id, event: first.event, createdAt: first.createdAt });
      expect(await deliveries.list({ workspaceId }, 10)).toHaveLength(1);
    });

    it("created by several processes at once, is one delivery that all of them answer", async () => {
      const others = await Promise.all(Array.from({ length: 6 }, () => db.connect()));
      const eventId = "evt_shared";
      const created = await Promise.all(
        others.map((other) => other.deliveries.createOnce({ ...newDelivery("sub_hook"), eventId })),
      );
      expect(new Set(created.map((delivery) => delivery.id)).size).toBe(1);
      expect(await deliveries.list({ workspaceId, eventId }, 10)).toHaveLength(1);
    });

    it("an unknown id is undefined", async () => {
      expect(await deliveries.get("dlv_none")).toBeUndefined();
    });
  });

  describe("the list", () => {
    it("is newest first, equal times in descending byte order of id, without the event", async () => {
      const at = t0 + 1_000_000;
      for (const id of ["dlv_B", "dlv__", "dlv_a", "dlv_-"]) {
        await deliveries.createOnce(newDelivery("sub_hook", { id, createdAt: at }));
      }
      await deliveries.createOnce(newDelivery("sub_hook", { id: "dlv_older", createdAt: at - 1 }));
      const listed = await deliveries.list({ workspaceId }, 10);
      expect(listed.map((delivery) => delivery.id)).toEqual([
        "dlv_a",
        "dlv__",
        "dlv_B",
        "dlv_-",
        "dlv_older",
      ]);
      expect(listed[0]).not.toHaveProperty("event");
      expect(listed[0]).toMatchObject({
        status: "pending",
        attempts: 0,
        workspaceId,
        subscriptionId: "sub_hook",
      });
    });

    it("filters by subscription, status and event, within the workspace, up to the limit", async () => {
      await addSubscription(db, { id: "sub_other", workspaceId, url: "https://hooks.example.test/b" });
      await addSubscription(db, { id: "sub_elsewhere", workspaceId: "ws_else", url: "https://x.test" });
      const a = await deliveries.createOnce(newDelivery("sub_hook"));
      const b = await deliveries.createOnce(newDelivery("sub_other"));
      const c = await deliveries.createOnce(newDelivery("sub_hook"));
      await deliveries.createOnce(newDelivery("sub_elsewhere", { workspaceId: "ws_else" }));
      await record(attemptOf(c.id, "failed"));
      const ids = async (filter: Partial<Parameters<typeof deliveries.list>[0]>, limit = 10) =>
        (await deliveries.list({ workspaceId, ...filter }, limit)).map((delivery) => delivery.id);
      expect(await ids({})).toEqual([c.id, b.id, a.id]);
      expect(await ids({ subscriptionId: "sub_hook" })).toEqual([c.id, a.id]);
      expect(await ids({ status: "failed" })).toEqual([c.id]);
      expect(await ids({ status: "pending", subscriptionId: "sub_hook" })).toEqual([a.id]);
      expect(await ids({ eventId: b.eventId })).toEqual([b.id]);
      expect(await ids({}, 2)).toEqual([c.id, b.id]);
    });

    it("pages by keyset: each page continues strictly after the key it is given, equal times by id (D40)", async () => {
      const at = t0 + 2_000_000;
      for (const id of ["dlv_B", "dlv__", "dlv_a", "dlv_-"]) {
        await deliveries.createOnce(newDelivery("sub_hook", { id, createdAt: at }));
      }
      await deliveries.createOnce(newDelivery("sub_hook", { id: "dlv_older", createdAt: at - 1 }));
      await deliveries.createOnce(newDelivery("sub_hook", { id: "dlv_newer", createdAt: at + 1 }));
      const page = async (after?: DeliveryKey) =>
        (await deliveries.list({ workspaceId, after }, 2)).map((delivery) => delivery.id);
      expect(await page()).toEqual(["dlv_newer", "dlv_a"]);
      expect(await page({ createdAt: at, id: "dlv_a" })).toEqual(["dlv__", "dlv_B"]);
      expect(await page({ createdAt: at, id: "dlv_B" })).toEqual(["dlv_-", "dlv_older"]);
      expect(await page({ createdAt: at - 1, id: "dlv_older" })).toEqual([]);
      // A key no delivery has still bounds the page: the last of a page may be gone since.
      expect(await page({ createdAt: at, id: "dlv_Z" })).toEqual(["dlv_B", "dlv_-"]);
    });

    it("filters by event type, creation time (bounds included), status held and the last attempt's HTTP status class (D40)", async () => {
      const created = async (overrides: Partial<NewDelivery> = {}) =>
        (await deliveries.createOnce(newDelivery("sub_hook", overrides))).id;
      const completed = await created();
      const fired = await created({ eventType: "workflow.alert.fired" });
      const redirected = await created();
      const gone = await created();
      const unreachable = await created();
      const held = await created();
      await record(attemptOf(completed, "succeeded"));
      await record(attemptOf(fired, "retrying"));
      await record(attemptOf(redirected, "failed", { httpStatus: 302, error: "HTTP 302" }));
      await record(attemptOf(gone, "failed", { httpStatus: 410, error: "HTTP 410" }));
      await record(attemptOf(unreachable, "failed", { httpStatus: null, error: "connect ECONNREFUSED" }));
      await db.query("UPDATE deliveries SET status = 'held' WHERE id = @id", { id: held });
      const ids = async (filter: Omit<DeliveryFilter, "workspaceId">) =>
        (await deliveries.list({ workspaceId, ...filter }, 10)).map((delivery) => delivery.id);
      const createdAt = async (id: string) => (await deliveries.get(id))?.createdAt;

      expect(await ids({ eventType: "workflow.alert.fired" })).toEqual([fired]);
      expect(await ids({ eventType: "workflow.execution.completed", status: "failed" })).toEqual([
        unreachable,
        gone,
        redirected,
      ]);
      expect(await ids({ status: "held" })).toEqual([held]);
      expect(await ids({ httpStatusClass: "2xx" })).toEqual([completed]);
      expect(await ids({ httpStatusClass: "3xx" })).toEqual([redirected]);
      expect(await ids({ httpStatusClass: "4xx" })).toEqual([gone]);
      expect(await ids({ httpStatusClass: "5xx" })).toEqual([fired]);
      // No HTTP answer: none made yet, or the network's error.
      expect(await ids({ httpStatusClass: "none" })).toEqual([held, unreachable]);
      expect(await ids({ createdFrom: await createdAt(fired), createdTo: await createdAt(gone) })).toEqual([
        gone,
        redirected,
        fired,
      ]);
      const goneAt = await createdAt(gone);
      expect(await ids({ createdFrom: goneAt, createdTo: goneAt })).toEqual([gone]);
      expect(await ids({ createdFrom: goneAt, httpStatusClass: "none" })).toEqual([held, unreachable]);
    });

    it("reads the common filters along an index in the list's order, never sorting nor scanning the table (D40)", async () => {
      // PostgreSQL plans by statistics, taken on a table of some size where a page is few rows among many;
      // its autovacuum analyses in use. SQLite plans by the indexes alone, as flowlog never analyses it.
      for (let n = 0; n < 8; n++) {
        await addSubscription(db, { id: `sub_p${n}`, workspaceId: `ws_p${n % 4}`, url: "https://p.test" });
      }
      await db.query(
        `WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
         INSERT INTO deliveries (id, event_id, event_type, subscription_id, workspace_id, event_json, status,
           attempts, created_at, updated_at, last_http_status)
         SELECT 'dlv_p' || i, 'evt_p' || i,
           CASE WHEN i % 13 = 0 THEN 'workflow.alert.fired' ELSE 'workflow.execution.completed' END,
           'sub_p' || (i % 8), 'ws_p' || (i % 4), '{}',
           CASE WHEN i % 7 = 0 THEN 'failed' WHEN i % 11 = 0 THEN 'held' ELSE 'succeeded' END,
           1, ${t0} + i * 1000, ${t0} + i * 1000, CASE WHEN i % 7 = 0 THEN 503 ELSE 204 END
         FROM n`,
      );
      if (kind === "PostgreSQL") await db.query("ANALYZE");
      const middle: DeliveryKey = { createdAt: t0 + 20_000_000, id: "dlv_p20000" };
      const common: [Omit<DeliveryFilter, "workspaceId">, string][] = [
        [{}, "deliveries_by_workspace"],
        [{ subscriptionId: "sub_p4" }, "deliveries_by_subscription"],
        [{ status: "failed" }, "deliveries_by_status"],
        [{ status: "held" }, "deliveries_by_status"],
        [{ subscriptionId: "sub_p4", status: "failed" }, "deliveries_by_subscription_status"],
        [{ eventType: "workflow.alert.fired" }, "deliveries_by_event_type"],
      ];
      for (const [filter, index] of common) {
        for (const after of [undefined, middle]) {
          const plan = (await deliveries.explainList({ workspaceId: "ws_p0", ...filter, after }, 101)).join(
            "\n",
          );
          const what = `${JSON.stringify({ ...filter, after })}: ${plan}`;
          if (kind === "SQLite") {
            expect(plan, what).toMatch(new RegExp(`^SEARCH deliveries USING INDEX ${index} `));
            expect(plan, what).not.toMatch(/TEMP B-TREE|SCAN/);
          } else {
            expect(plan, what).toMatch(new RegExp(`Index Scan (Backward )?using ${index} `));
            expect(plan, what).not.toMatch(/Sort|Seq Scan|Bitmap/);
          }
        }
      }
    });
  });

  describe("attempts", () => {
    it("are listed in series and attempt order, as recorded", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      const first = attemptOf(id, "retrying");
      const second = attemptOf(id, "failed", { attempt: 2, startedAt: t0 + 65_000 });
      const redelivered = attemptOf(id, "succeeded", { series: 2, startedAt: t0 + 600_000 });
      await record(first);
      await record(second);
      expect(await deliveries.reopen(id, t0 + 599_000, 21)).toEqual({ series: 2 });
      await record(redelivered);
      expect(await deliveries.attemptsOf(id)).toEqual([first, second, redelivered]);
    });

    it("are read in pages, newest first, each page older than the key it is given (D40)", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      const { id: otherId } = await deliveries.createOnce(newDelivery("sub_hook"));
      const recorded: DeliveryAttemptRecord[] = [];
      for (const [series, attempts] of [
        [1, 3],
        [2, 1],
        [3, 2],
      ] as const) {
        if (series > 1) await deliveries.reopen(id, t0 + series * 100_000, 21);
        for (let attempt = 1; attempt <= attempts; attempt++) {
          const outcome = attempt < attempts ? "retrying" : "failed";
          const at = t0 + series * 100_000 + attempt * 1_000;
          recorded.push(attemptOf(id, outcome, { series, attempt, startedAt: at }));
          await record(recorded.at(-1) as DeliveryAttemptRecord);
        }
      }
      await record(attemptOf(otherId, "failed"));
      const newestFirst = [...recorded].reverse();
      expect(await deliveries.newestAttempts(id, 100)).toEqual(newestFirst);
      expect(await deliveries.newestAttempts(id, 2)).toEqual(newestFirst.slice(0, 2));
      expect(await deliveries.newestAttempts(id, 3, { series: 3, attempt: 1 })).toEqual(
        newestFirst.slice(2, 5),
      );
      expect(await deliveries.newestAttempts(id, 10, { series: 1, attempt: 2 })).toEqual(
        newestFirst.slice(5),
      );
      expect(await deliveries.newestAttempts(id, 10, { series: 1, attempt: 1 })).toEqual([]);
      expect(await deliveries.newestAttempts("dlv_none", 10)).toEqual([]);
    });

    it("settle the delivery: status, attempts over all series, last error and HTTP status, time of the last end", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      await record(attemptOf(id, "retrying"));
      expect(await deliveries.get(id)).toMatchObject({
        status: "pending",
        attempts: 1,
        lastError: "HTTP 503",
        lastHttpStatus: 503,
      });
      const timedOut = {
        attempt: 2,
        startedAt: t0 + 65_000,
        httpStatus: null,
        error: "timed out after 30 s",
      };
      await record(attemptOf(id, "retrying", timedOut));
      expect(await deliveries.get(id)).toMatchObject({ attempts: 2, lastHttpStatus: null });
      const last = attemptOf(id, "succeeded", { attempt: 3, startedAt: t0 + 70_000, durationMs: 40 });
      await record(last);
      expect(await deliveries.get(id)).toMatchObject({
        status: "succeeded",
        attempts: 3,
        lastError: null,
        lastHttpStatus: 204,
        updatedAt: t0 + 70_040,
      });
    });

    it("recorded again (an activity retried after its write) replace the first record and count once", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      await record(attemptOf(id, "failed"));
      const again = attemptOf(id, "failed", { durationMs: 900, responseSnippet: "again" });
      expect(await record(again)).toBe(false);
      expect(await deliveries.attemptsOf(id)).toEqual([again]);
      expect(await deliveries.get(id)).toMatchObject({ status: "failed", attempts: 1 });
    });

    it("are all recorded while another process commits to the same database", async () => {
      const stop = await db.busyWriter();
      const failures: string[] = [];
      let recorded = 0;
      try {
        const deadline = Date.now() + 2_000;
        while (Date.now() < deadline) {
          const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
          // In SQLite, a transaction that reads before it writes and does not take the write lock first
          // fails at once ("database is locked") when another connection commits in between.
          await record(attemptOf(id, "succeeded")).then(
            () => recorded++,
            (error: Error) => failures.push(error.message),
          );
        }
      } finally {
        await stop();
      }
      expect(failures).toEqual([]);
      expect(recorded).toBeGreaterThan(20);
    });
  });

  describe("the endpoint's run of failures (D35)", () => {
    const runOf = async () => (await db.areas.endpointHealth.get("sub_hook"))?.run;

    it("a failed delivery extends the run once; its retried write counts nothing", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      expect(await record(attemptOf(id, "retrying"))).toBe(false);
      expect(await runOf()).toBeNull();
      const failed = attemptOf(id, "failed", { attempt: 2, error: "HTTP 500" });
      expect(await record(failed)).toBe(true);
      expect(await record(failed)).toBe(false);
      expect(await runOf()).toEqual({
        failingSince: failed.startedAt + failed.durationMs,
        failedDeliveries: 1,
        noticedAt: null,
        lastFailure: "HTTP 500",
      });
    });

    it("a run starts at its first failure and a success ends it", async () => {
      for (const at of [t0, t0 + 1000]) {
        const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
        await record(attemptOf(id, "failed", { startedAt: at }));
      }
      expect(await runOf()).toMatchObject({ failingSince: t0 + 250, failedDeliveries: 2 });
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      expect(await record(attemptOf(id, "succeeded"))).toBe(false);
      expect(await runOf()).toBeNull();
    });

    it("an e-mail subscription's failures are not counted", async () => {
      await addSubscription(db, { id: "sub_mail", workspaceId, channel: "email" });
      const { id } = await deliveries.createOnce(newDelivery("sub_mail"));
      expect(await record(attemptOf(id, "failed"))).toBe(false);
      expect((await db.areas.endpointHealth.get("sub_mail"))?.run).toBeNull();
    });

    it("failures settling at once in several processes are each counted", async () => {
      const others = await Promise.all(Array.from({ length: 6 }, () => db.connect()));
      const created = await Promise.all(others.map(() => deliveries.createOnce(newDelivery("sub_hook"))));
      const counted = await Promise.all(
        others.map((other, index) => record(attemptOf(created[index]?.id ?? "", "failed"), other.deliveries)),
      );
      expect(counted).toEqual(others.map(() => true));
      expect(await runOf()).toMatchObject({ failedDeliveries: others.length });
    });

    it("one failure written at once by several processes (a retry racing its try) is counted once", async () => {
      const others = await Promise.all(Array.from({ length: 6 }, () => db.connect()));
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      const counted = await Promise.all(
        others.map((other) => record(attemptOf(id, "failed"), other.deliveries)),
      );
      expect(counted.filter(Boolean)).toHaveLength(1);
      expect(await runOf()).toMatchObject({ failedDeliveries: 1 });
      expect(await deliveries.get(id)).toMatchObject({ status: "failed", attempts: 1 });
    });
  });

  describe("the hold (D36)", () => {
    const holds = () => db.areas.holds;
    const stateOf = async () => (await holds().status("sub_hook"))?.state;
    /** A delivery of the subscription that ends failed after its whole schedule, at `at`. */
    const exhaust = async (at = t0) => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      await deliveries.recordAttempt(attemptOf(id, "failed", { startedAt: at }), "failed", {
        exhausted: true,
      });
      return id;
    };

    it("three exhaustions in a row hold the endpoint and take back what they failed; new deliveries are made held", async () => {
      const exhausted = [await exhaust(), await exhaust(t0 + 1), await exhaust(t0 + 2)];
      expect(await stateOf()).toBe("held");
      expect((await holds().status("sub_hook"))?.heldAt).toBe(t0 + 252);
      for (const id of exhausted) expect(await deliveries.get(id)).toMatchObject({ status: "held" });
      expect(await deliveries.createOnce(newDelivery("sub_hook"))).toMatchObject({ status: "held" });
      // The Test RPC's sample goes whatever the state.
      expect(await deliveries.createOnce(newDelivery("sub_hook", { holdable: false }))).toMatchObject({
        status: "pending",
      });
      expect(await holds().heldCount("sub_hook")).toBe(4);
    });

    it("takes back exhaustions that ended earlier than one settled before them", async () => {
      const exhausted = [await exhaust(t0 + 100), await exhaust(t0), await exhaust(t0 + 50)];
      expect(await stateOf()).toBe("held");
      expect((await db.areas.endpointHealth.get("sub_hook"))?.run?.failingSince).toBe(t0 + 250);
      for (const id of exhausted) expect(await deliveries.get(id)).toMatchObject({ status: "held" });
    });

    it("a success or a 4xx breaks the run: two, a 4xx, two more do not hold", async () => {
      await exhaust();
      await exhaust();
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      await record(attemptOf(id, "failed", { httpStatus: 410 }));
      await exhaust();
      await exhaust();
      expect(await stateOf()).toBe("active");
      expect(await deliveries.createOnce(newDelivery("sub_hook"))).toMatchObject({ status: "pending" });
    });

    it("a pending delivery is held before its attempt only while the endpoint is held", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      expect(await holds().holdPending(id, t0)).toBe(false);
      for (let n = 0; n < 3; n++) await exhaust();
      expect(await holds().holdPending(id, t0)).toBe(true);
      expect(await deliveries.get(id)).toMatchObject({ status: "held" });
    });

    it("drains oldest first by event time; the drain ends only when nothing is held", async () => {
      for (let n = 0; n < 3; n++) await exhaust();
      const late = await deliveries.createOnce(
        newDelivery("sub_hook", { event: { id: "evt_early", timestamp: t0 - 5_000 } }),
      );
      const oldest = await holds().oldestHeld("sub_hook", 10);
      expect(oldest[0]?.id).toBe(late.id);
      expect(oldest[1]).toMatchObject({ lastSeries: 1, lastAttempt: 1 });
      expect(await holds().release("sub_hook")).toBe(true);
      expect(await stateOf()).toBe("draining");
      expect(await deliveries.createOnce(newDelivery("sub_hook"))).toMatchObject({ status: "held" });
      expect(await holds().finishDrain("sub_hook")).toBe(false);
      await deliveries.recordAttempts(
        (await holds().oldestHeld("sub_hook", 100)).map((held) => ({
          attempt: attemptOf(held.id, "succeeded", { series: held.lastSeries + 1 }),
          status: "succeeded",
          drained: true,
        })),
      );
      expect(await holds().finishDrain("sub_hook")).toBe(true);
      expect(await stateOf()).toBe("active");
      expect(await deliveries.createOnce(newDelivery("sub_hook"))).toMatchObject({ status: "pending" });
    });

    it("past either bound the oldest end failed with hold_limit; a disable ends the rest with subscription_disabled", async () => {
      for (let n = 0; n < 3; n++) await exhaust();
      for (let n = 1; n <= 5; n++) {
        await deliveries.createOnce(
          newDelivery("sub_hook", { event: { id: `evt_b${n}`, timestamp: t0 + n * 1000 } }),
        );
      }
      // 8 held: the three exhausted (events at t0) are older than the age bound, and 2 more are past the count.
      const trimmed = await holds().trim("sub_hook", { maxDeliveries: 3, maxAgeMs: 500 }, t0 + 501);
      expect(trimmed).toBe(5);
      const left = await holds().oldestHeld("sub_hook", 10);
      expect(left.map((held) => held.eventAt)).toEqual([t0 + 3000, t0 + 4000, t0 + 5000]);
      const limited = await deliveries.list({ workspaceId, status: "failed" }, 10);
      expect(limited.every((d) => d.lastError?.startsWith("hold_limit:"))).toBe(true);
      expect(await holds().abandon("sub_hook", t0 + 600)).toBe(3);
      expect(await stateOf()).toBe("active");
      const disabled = await deliveries.list({ workspaceId, status: "failed" }, 10);
      expect(disabled.filter((d) => d.lastError?.startsWith("subscription_disabled:"))).toHaveLength(3);
    });

    it("a delivery made while another process ends the drain is either held before the end or made pending", async () => {
      for (let n = 0; n < 3; n++) await exhaust();
      await deliveries.recordAttempts(
        (await holds().oldestHeld("sub_hook", 100)).map((held) => ({
          attempt: attemptOf(held.id, "succeeded", { series: 2 }),
          status: "succeeded",
          drained: true,
        })),
      );
      await holds().release("sub_hook");
      const others = await Promise.all(Array.from({ length: 4 }, () => db.connect()));
      const [ender, ...makers] = others as [Areas, ...Areas[]];
      const made = Promise.all(
        makers.flatMap((maker) =>
          Array.from({ length: 10 }, () => maker.deliveries.createOnce(newDelivery("sub_hook"))),
        ),
      );
      let ended = false;
      while (!ended) {
        ended = await ender.holds.finishDrain("sub_hook");
        if (!ended) {
          for (const held of await ender.holds.oldestHeld("sub_hook", 100)) {
            await ender.deliveries.recordAttempt(attemptOf(held.id, "succeeded", { series: 2 }), "succeeded");
          }
        }
      }
      await made;
      expect(await stateOf()).toBe("active");
      expect(await holds().heldCount("sub_hook")).toBe(0);
    });
  });

  describe("redelivery (D19)", () => {
    it("opens the next series of a settled delivery, never of one still running", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      expect(await deliveries.reopen(id, t0 + 1, 21)).toEqual({ refused: "running" });
      await record(attemptOf(id, "failed"));
      expect(await deliveries.reopen(id, t0 + 100_000, 21)).toEqual({ series: 2 });
      expect(await deliveries.get(id)).toMatchObject({ status: "pending", updatedAt: t0 + 100_000 });
      expect(await deliveries.reopen(id, t0 + 100_001, 21)).toEqual({ refused: "running" });
      await record(attemptOf(id, "succeeded", { series: 2, startedAt: t0 + 100_002 }));
      expect(await deliveries.reopen(id, t0 + 200_000, 21)).toEqual({ series: 3 });
    });

    it("a delivery settled before any attempt was recorded reopens as series 2", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      await db.query("UPDATE deliveries SET status = 'failed' WHERE id = @id", { id });
      expect(await deliveries.reopen(id, t0 + 1, 21)).toEqual({ series: 2 });
    });

    it("opens no series beyond the most allowed, and leaves the delivery settled (D40)", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      await record(attemptOf(id, "failed"));
      for (let series = 2; series <= 3; series++) {
        expect(await deliveries.reopen(id, t0 + series * 100_000, 3)).toEqual({ series });
        await record(attemptOf(id, "failed", { series, startedAt: t0 + series * 100_000 + 1 }));
      }
      expect(await deliveries.reopen(id, t0 + 400_000, 3)).toEqual({
        refused: "series_limit",
        lastSeries: 3,
      });
      expect(await deliveries.get(id)).toMatchObject({ status: "failed", attempts: 3 });
    });

    it("asked by several processes at once, opens one series", async () => {
      const others = await Promise.all(Array.from({ length: 6 }, () => db.connect()));
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      await record(attemptOf(id, "failed"));
      const opened = await Promise.all(others.map((other) => other.deliveries.reopen(id, t0 + 100_000, 21)));
      expect(opened.filter((reopened) => reopened && "series" in reopened)).toEqual([{ series: 2 }]);
    });

    it("a held delivery opens no series: its endpoint's release sends it (D36)", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      await db.query("UPDATE deliveries SET status = 'held' WHERE id = @id", { id });
      expect(await deliveries.reopen(id, t0 + 1, 21)).toEqual({ refused: "running" });
      expect(await deliveries.get(id)).toMatchObject({ status: "held" });
    });

    it("an unknown delivery opens nothing", async () => {
      expect(await deliveries.reopen("dlv_none", t0, 21)).toBeUndefined();
    });
  });

  describe("recovery's reads (D37)", () => {
    it("count and page a subscription's failed deliveries of a window, oldest first, bounds included", async () => {
      await addSubscription(db, { id: "sub_other", workspaceId, url: "https://hooks.example.test/b" });
      const at = (offset: number) => t0 + 1_000 + offset;
      // Equal times come in id order; the last is after the window.
      for (const [offset, id] of [
        [0, "dlv_r_b"],
        [0, "dlv_r_a"],
        [5, "dlv_r_c"],
        [9, "dlv_r_d"],
        [12, "dlv_r_e"],
      ] as const) {
        await deliveries.createOnce(newDelivery("sub_hook", { id, createdAt: at(offset) }));
        await record(attemptOf(id, "failed"));
      }
      // Not failed, or another subscription's: never read.
      const running = await deliveries.createOnce(newDelivery("sub_hook", { createdAt: at(3) }));
      const succeeded = await deliveries.createOnce(newDelivery("sub_hook", { createdAt: at(4) }));
      await record(attemptOf(succeeded.id, "succeeded"));
      const other = await deliveries.createOnce(newDelivery("sub_other", { createdAt: at(6) }));
      await record(attemptOf(other.id, "failed"));
      expect(running.status).toBe("pending");

      const window = { subscriptionId: "sub_hook", since: at(0), until: at(9) };
      expect(await deliveries.countFailed(window, 100)).toBe(4);
      expect(await deliveries.countFailed(window, 3)).toBe(3);
      const first = await deliveries.failedPage(window, undefined, 3);
      expect(first.map((d) => d.id)).toEqual(["dlv_r_a", "dlv_r_b", "dlv_r_c"]);
      expect(first[0]).toEqual({ id: "dlv_r_a", createdAt: at(0) });
      const rest = await deliveries.failedPage(window, first.at(-1), 3);
      expect(rest.map((d) => d.id)).toEqual(["dlv_r_d"]);
      expect(await deliveries.failedPage(window, rest.at(-1), 3)).toEqual([]);
      expect(await deliveries.countFailed({ ...window, since: at(10), until: at(11) }, 100)).toBe(0);
    });
  });
});

/** The first schema version with the held status and the last HTTP status (issue 51), in each store's list. */
const heldVersion = (list: readonly unknown[]) =>
  list.findIndex((sql) => typeof sql === "string" && sql.includes("deliveries_by_status"));

/** The areas a test of an upgraded delivery log reads, and a way to run SQL on it. */
interface UpgradedDeliveries {
  deliveries: Areas["deliveries"];
  run(sql: string): Promise<void>;
}

/** A database at the schema just before issue 51's, then opened by this flowlog. */
const olderKinds = olderStoreKinds<UpgradedDeliveries>(
  heldVersion,
  {
    sqlite(db) {
      expect(db.pragma("foreign_key_check")).toEqual([]);
      return {
        deliveries: new DeliveriesStore(db, new EndpointHealthStore(db), new HoldsStore(db)),
        run: async (sql) => void db.exec(sql),
      };
    },
    postgres: (pool) => ({
      deliveries: new PostgresDeliveriesStore(
        pool,
        new PostgresEndpointHealthStore(pool),
        new PostgresHoldsStore(pool),
      ),
      run: async (sql) => void (await pool.query(sql)),
    }),
  },
  () => server,
);

describe.each(olderKinds)("a delivery log an older flowlog left, on %s (issue 51)", (_, open) => {
  let database: OlderDatabase<UpgradedDeliveries>;
  beforeEach(async () => {
    database = await open();
  });
  afterEach(() => database.close());

  it("keeps every delivery and attempt, takes each delivery's last HTTP status from its attempts, and can hold", async () => {
    await database.older(`
      INSERT INTO workspaces (id, name, created_at) VALUES ('ws_old', 'Old', 0);
      INSERT INTO notification_subscriptions (id, workspace_id, channel, config_json, all_workflows, active,
        created_at, updated_at) VALUES ('sub_old', 'ws_old', 'webhook', '{"url":"https://old.test"}', 1, 1, 0, 0);
      INSERT INTO deliveries (id, event_id, event_type, subscription_id, workspace_id, event_json, status, attempts,
        last_error, created_at, updated_at)
      VALUES ('dlv_redelivered', 'evt_1', 'workflow.execution.completed', 'sub_old', 'ws_old', '{"id":"evt_1"}',
          'succeeded', 3, NULL, 1, 9),
        ('dlv_unreachable', 'evt_2', 'workflow.execution.completed', 'sub_old', 'ws_old', '{"id":"evt_2"}',
          'failed', 1, 'connect ECONNREFUSED', 2, 3),
        ('dlv_new', 'evt_3', 'workflow.alert.fired', 'sub_old', 'ws_old', '{"id":"evt_3"}', 'pending', 0, NULL, 4, 4);
      INSERT INTO delivery_attempts (delivery_id, series, attempt, started_at, duration_ms, outcome, http_status, error)
      VALUES ('dlv_redelivered', 1, 1, 1, 1, 'retrying', 503, 'HTTP 503'),
        ('dlv_redelivered', 1, 2, 2, 1, 'failed', 410, 'HTTP 410'),
        ('dlv_redelivered', 2, 1, 8, 1, 'succeeded', 200, NULL),
        ('dlv_unreachable', 1, 1, 2, 1, 'failed', NULL, 'connect ECONNREFUSED');
    `);
    const { deliveries, run } = await database.upgrade();
    expect(
      (await deliveries.list({ workspaceId: "ws_old" }, 10)).map(
        ({ id, status, attempts, lastHttpStatus }) => ({
          id,
          status,
          attempts,
          lastHttpStatus,
        }),
      ),
    ).toEqual([
      { id: "dlv_new", status: "pending", attempts: 0, lastHttpStatus: null },
      { id: "dlv_unreachable", status: "failed", attempts: 1, lastHttpStatus: null },
      { id: "dlv_redelivered", status: "succeeded", attempts: 3, lastHttpStatus: 200 },
    ]);
    expect((await deliveries.attemptsOf("dlv_redelivered")).map((a) => a.httpStatus)).toEqual([
      503, 410, 200,
    ]);
    expect(await deliveries.get("dlv_redelivered")).toMatchObject({ event: { id: "evt_1" }, updatedAt: 9 });
    // The attempts still belong to their delivery: a redelivery's attempt is recorded against it.
    expect(await deliveries.reopen("dlv_unreachable", 10, 21)).toEqual({ series: 2 });
    await deliveries.recordAttempt(
      {
        deliveryId: "dlv_unreachable",
        series: 2,
        attempt: 1,
        startedAt: 11,
        durationMs: 1,
        outcome: "succeeded",
        httpStatus: 204,
        responseSnippet: null,
        error: null,
      },
      "succeeded",
    );
    expect(await deliveries.list({ workspaceId: "ws_old", httpStatusClass: "2xx" }, 10)).toMatchObject([
      { id: "dlv_unreachable", lastHttpStatus: 204 },
      { id: "dlv_redelivered" },
    ]);
    await run("UPDATE deliveries SET status = 'held' WHERE id = 'dlv_new'");
    expect(await deliveries.list({ workspaceId: "ws_old", status: "held" }, 10)).toMatchObject([
      { id: "dlv_new" },
    ]);
    await expect(run("UPDATE deliveries SET status = 'lost' WHERE id = 'dlv_new'")).rejects.toThrow(
      /CHECK|check/,
    );
  });
});
