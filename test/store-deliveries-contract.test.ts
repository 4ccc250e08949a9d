import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeliveriesStore } from "../src/store/deliveries-store.js";
import type { DeliveryAttemptRecord, DeliveryStatus, NewDelivery } from "../src/store/delivery-rows.js";
import { type EndpointHealthArea, EndpointHealthStore } from "../src/store/endpoint-health-store.js";
import { PostgresDeliveriesStore } from "../src/store/postgres/deliveries-store.js";
import { PostgresEndpointHealthStore } from "../src/store/postgres/endpoint-health-store.js";
import type { StoreArea } from "../src/store/store.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { addSubscription, type ContractDatabase, storeKinds } from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

interface Areas {
  deliveries: StoreArea<DeliveriesStore>;
  endpointHealth: EndpointHealthArea;
}

const kinds = storeKinds<Areas>(
  {
    sqlite: (db) => {
      const endpointHealth = new EndpointHealthStore(db);
      return { deliveries: new DeliveriesStore(db, endpointHealth), endpointHealth };
    },
    postgres: (pool) => {
      const endpointHealth = new PostgresEndpointHealthStore(pool);
      return { deliveries: new PostgresDeliveriesStore(pool, endpointHealth), endpointHealth };
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

describe.each(kinds)("the delivery log on %s (D19, D35, D32)", (_, open) => {
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

    it("settle the delivery: status, attempts over all series, last error, time of the last end", async () => {
      const { id } = await deliveries.createOnce(newDelivery("sub_hook"));
      await record(attemptOf(id, "retrying"));
      expect(await deliveries.get(id)).toMatchObject({
        status: "pending",
        attempts: 1,
        lastError: "HTTP 503",
      });
      const last = attemptOf(id, "succeeded", { attempt: 2, startedAt: t0 + 70_000, durationMs: 40 });
      await record(last);
      expect(await deliveries.get(id)).toMatchObject({
        status: "succeeded",
        attempts: 2,
        lastError: null,
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

    it("an unknown delivery opens nothing", async () => {
      expect(await deliveries.reopen("dlv_none", t0, 21)).toBeUndefined();
    });
  });
});
