import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EndpointHealthArea, EndpointHealthStore } from "../src/store/endpoint-health-store.js";
import { PostgresEndpointHealthStore } from "../src/store/postgres/endpoint-health-store.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { addSubscription, type ContractDatabase, storeKinds } from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

const kinds = storeKinds<EndpointHealthArea>(
  {
    sqlite: (db) => new EndpointHealthStore(db),
    postgres: (pool) => new PostgresEndpointHealthStore(pool),
  },
  () => server,
);

const workspaceId = "ws_health";
const failingSince = Date.parse("2026-11-01T00:00:00.000Z");
const day = 86_400_000;

describe.each(kinds)("the endpoint-health area on %s (D35, D32)", (_, open) => {
  let db: ContractDatabase<EndpointHealthArea>;
  let health: EndpointHealthArea;
  beforeEach(async () => {
    db = await open();
    health = db.areas;
  });
  afterEach(() => db.close());

  /** A webhook subscription in a run of failures that began at failingSince. */
  async function failing(id: string, fixture: { active?: boolean; deletedAt?: number } = {}) {
    await addSubscription(db, { id, workspaceId, url: `https://hooks.example.test/${id}`, ...fixture });
    await db.query(
      `UPDATE notification_subscriptions SET failing_since = @failingSince, failed_deliveries = 20,
         last_failure = 'HTTP 503' WHERE id = @id`,
      { id, failingSince },
    );
  }

  describe("what the watcher reads", () => {
    it("an unknown subscription is undefined", async () => {
      expect(await health.get("sub_none")).toBeUndefined();
    });

    it("a healthy endpoint shows its URL and no run", async () => {
      await addSubscription(db, { id: "sub_ok", workspaceId, url: "https://hooks.example.test/ok" });
      expect(await health.get("sub_ok")).toEqual({
        subscriptionId: "sub_ok",
        workspaceId,
        channel: "webhook",
        url: "https://hooks.example.test/ok",
        active: true,
        deleted: false,
        run: null,
      });
    });

    it("a failing endpoint shows its run: since when, how many, the last error, no notice yet", async () => {
      await failing("sub_failing");
      expect((await health.get("sub_failing"))?.run).toEqual({
        failingSince,
        failedDeliveries: 20,
        noticedAt: null,
        lastFailure: "HTTP 503",
      });
    });

    it("an e-mail subscription has no URL; a deleted one says so", async () => {
      await addSubscription(db, { id: "sub_mail", workspaceId, channel: "email" });
      await addSubscription(db, { id: "sub_gone", workspaceId, deletedAt: failingSince });
      expect(await health.get("sub_mail")).toMatchObject({ channel: "email", url: "" });
      expect(await health.get("sub_gone")).toMatchObject({ deleted: true });
    });
  });

  describe("the advance notice", () => {
    it("is claimed once per run", async () => {
      await failing("sub_notice");
      expect(await health.claimNotice("sub_notice", failingSince, failingSince + 4 * day)).toBe(true);
      expect(await health.claimNotice("sub_notice", failingSince, failingSince + 4 * day + 1)).toBe(false);
      expect((await health.get("sub_notice"))?.run?.noticedAt).toBe(failingSince + 4 * day);
    });

    it("is not claimed for a run that is over, nor for an inactive or deleted endpoint", async () => {
      await failing("sub_stale");
      await failing("sub_inactive", { active: false });
      await failing("sub_deleted", { deletedAt: failingSince + day });
      expect(await health.claimNotice("sub_stale", failingSince - 1, failingSince + 4 * day)).toBe(false);
      expect(await health.claimNotice("sub_inactive", failingSince, failingSince + 4 * day)).toBe(false);
      expect(await health.claimNotice("sub_deleted", failingSince, failingSince + 4 * day)).toBe(false);
    });

    it("claimed by several processes at once, goes to exactly one", async () => {
      await failing("sub_race");
      const others = await Promise.all(Array.from({ length: 6 }, () => db.connect()));
      const claims = await Promise.all(
        others.map((other) => other.claimNotice("sub_race", failingSince, failingSince + 4 * day)),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
    });
  });

  describe("the disable", () => {
    it("waits for the run's notice, then disables once, with its reason and time", async () => {
      await failing("sub_disable");
      const at = failingSince + 5 * day;
      expect(await health.disable("sub_disable", failingSince, "failing for 5 days", at)).toBe(false);
      await health.claimNotice("sub_disable", failingSince, failingSince + 4 * day);
      expect(await health.disable("sub_disable", failingSince, "failing for 5 days", at)).toBe(true);
      expect(await health.disable("sub_disable", failingSince, "failing for 5 days", at + 1)).toBe(false);
      expect(await health.get("sub_disable")).toMatchObject({ active: false });
      expect(
        await db.query("SELECT disabled_reason, disabled_at, updated_at FROM notification_subscriptions"),
      ).toEqual([{ disabled_reason: "failing for 5 days", disabled_at: at, updated_at: at }]);
    });

    it("does not disable for a run that is over", async () => {
      await failing("sub_recovered");
      await health.claimNotice("sub_recovered", failingSince, failingSince + 4 * day);
      const at = failingSince + 5 * day;
      expect(await health.disable("sub_recovered", failingSince + 1, "stale", at)).toBe(false);
      expect(await health.get("sub_recovered")).toMatchObject({ active: true });
    });

    it("decided by several processes at once, is done by exactly one", async () => {
      await failing("sub_race");
      await health.claimNotice("sub_race", failingSince, failingSince + 4 * day);
      const others = await Promise.all(Array.from({ length: 6 }, () => db.connect()));
      const disabled = await Promise.all(
        others.map((other) => other.disable("sub_race", failingSince, "failing", failingSince + 5 * day)),
      );
      expect(disabled.filter(Boolean)).toHaveLength(1);
    });
  });
});
