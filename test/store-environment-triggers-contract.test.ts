import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EnvironmentStore } from "../src/store/environment-store.js";
import { InactivityStore } from "../src/store/inactivity-store.js";
import { PostgresEnvironmentStore } from "../src/store/postgres/environment-store.js";
import { PostgresInactivityStore } from "../src/store/postgres/inactivity-store.js";
import { PostgresTriggersStore } from "../src/store/postgres/triggers-store.js";
import type { StoreArea } from "../src/store/store.js";
import { TriggersStore } from "../src/store/triggers-store.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { addSubscription, type ContractDatabase, storeKinds } from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

interface Areas {
  environment: StoreArea<EnvironmentStore>;
  triggers: StoreArea<TriggersStore>;
  inactivity: StoreArea<InactivityStore>;
}

const masterKey = Buffer.alloc(32, 7);
const kinds = storeKinds<Areas>(
  {
    sqlite: (db) => ({
      environment: new EnvironmentStore(db, masterKey),
      triggers: new TriggersStore(db),
      inactivity: new InactivityStore(db),
    }),
    postgres: (pool) => ({
      environment: new PostgresEnvironmentStore(pool, masterKey),
      triggers: new PostgresTriggersStore(pool),
      inactivity: new PostgresInactivityStore(pool),
    }),
  },
  () => server,
);

const t0 = Date.parse("2026-11-01T10:00:00.000Z");
const workspaceId = "ws_triggers";

describe.each(kinds)(
  "environment variables, triggers and inactivity reads on %s (D14, D15, D21, D32)",
  (_, open) => {
    let db: ContractDatabase<Areas>;
    let areas: Areas;
    beforeEach(async () => {
      db = await open();
      areas = db.areas;
      await db.query("INSERT INTO workspaces (id, name, created_at) VALUES (@workspaceId, 'Contract', 0)", {
        workspaceId,
      });
      for (const id of ["wf_1", "wf_2"]) {
        await db.query(
          `INSERT INTO workflows (id, workspace_id, name, created_at, updated_at)
         VALUES (@id, @workspaceId, @id, 0, 0)`,
          { id, workspaceId },
        );
      }
    });
    afterEach(() => db.close());

    it("keeps a variable's value only sealed, lists names by name, and opens values for the engine", async () => {
      expect(await areas.environment.set(workspaceId, "TOKEN", "s3cret-value", t0)).toEqual({
        created: { workspaceId, name: "TOKEN", createdAt: t0, updatedAt: t0 },
      });
      await areas.environment.set(workspaceId, "A_URL", "https://a.example", t0 + 1);
      expect(await areas.environment.set(workspaceId, "TOKEN", "rotated-value", t0 + 2)).toEqual({
        created: { workspaceId, name: "TOKEN", createdAt: t0, updatedAt: t0 + 2 },
      });
      expect((await areas.environment.list(workspaceId)).map((v) => v.name)).toEqual(["A_URL", "TOKEN"]);
      expect(await areas.environment.getDecrypted(workspaceId)).toEqual({
        A_URL: "https://a.example",
        TOKEN: "rotated-value",
      });
      const stored = await db.query<{ sealed_value: Buffer }>(
        "SELECT sealed_value FROM environment_variables",
      );
      for (const row of stored)
        expect(Buffer.from(row.sealed_value).toString("latin1")).not.toMatch(/value|example/);
      expect(await areas.environment.delete(workspaceId, "TOKEN")).toBe(true);
      expect(await areas.environment.delete(workspaceId, "TOKEN")).toBe(false);
      expect(await areas.environment.getDecrypted(workspaceId)).toEqual({ A_URL: "https://a.example" });
    });

    it("refuses a new name at the cap, also from two connections at once, but never a new value", async () => {
      const other = await db.connect();
      const max = 5;
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, n) =>
          (n % 2 ? other : areas).environment.set(workspaceId, `VAR_${n}`, "v", t0 + n, max),
        ),
      );
      expect(results.filter((r) => "created" in r)).toHaveLength(max);
      expect(results.filter((r) => "full" in r).every((r) => "full" in r && r.full === max)).toBe(true);
      const kept = (await areas.environment.list(workspaceId))[0]?.name as string;
      expect(await areas.environment.set(workspaceId, kept, "new value", t0 + 99, max)).toMatchObject({
        created: { name: kept, updatedAt: t0 + 99 },
      });
    });

    it("finds a webhook only by its token's hash; setting again replaces the token", async () => {
      const webhook = { workflowId: "wf_1", billedUserId: "usr_1", createdAt: t0 };
      await areas.triggers.setWebhook(webhook, Buffer.alloc(32, 1));
      expect(await areas.triggers.webhookByToken("wf_1", Buffer.alloc(32, 1))).toEqual(webhook);
      expect(await areas.triggers.webhookByToken("wf_1", Buffer.alloc(32, 2))).toBeUndefined();
      await areas.triggers.setWebhook({ ...webhook, createdAt: t0 + 5 }, Buffer.alloc(32, 2));
      expect(await areas.triggers.webhookByToken("wf_1", Buffer.alloc(32, 1))).toBeUndefined();
      expect(await areas.triggers.webhookByToken("wf_1", Buffer.alloc(32, 2))).toEqual({
        ...webhook,
        createdAt: t0 + 5,
      });
      expect(await areas.triggers.deleteWebhook("wf_1")).toBe(true);
      expect(await areas.triggers.deleteWebhook("wf_1")).toBe(false);
    });

    it("records schedules of live workflows only, up to the cap, also from two connections at once", async () => {
      const schedule = (n: number, workflowId = "wf_1") => ({
        id: `sch_${n}`,
        workflowId,
        cron: "0 * * * *",
        billedUserId: "usr_1",
        createdAt: t0 + n,
      });
      const other = await db.connect();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, n) => (n % 2 ? other : areas).triggers.addSchedule(schedule(n), 4)),
      );
      expect(results.filter((r) => r && "created" in r)).toHaveLength(4);
      expect(results.filter((r) => r && "full" in r)).toHaveLength(6);
      const listed = await areas.triggers.listSchedules("wf_1");
      expect(listed).toHaveLength(4);
      expect(listed.map((s) => s.createdAt)).toEqual(
        [...listed.map((s) => s.createdAt)].sort((a, b) => a - b),
      );
      expect(await areas.triggers.getSchedule(listed[0]?.id as string)).toEqual(listed[0]);
      expect(await areas.triggers.deleteSchedule(listed[0]?.id as string)).toBe(true);
      expect(await areas.triggers.deleteSchedule(listed[0]?.id as string)).toBe(false);
      await db.query("UPDATE workflows SET deleted_at = 1 WHERE id = 'wf_2'");
      expect(await areas.triggers.addSchedule(schedule(50, "wf_2"), 4)).toBeUndefined();
      expect(await areas.triggers.addSchedule(schedule(51, "wf_missing"), 4)).toBeUndefined();
    });

    it("reads a workflow's latest execution through the trigger filter", async () => {
      const entries: [string, string, number][] = [
        ["log_1", "api", t0],
        ["log_2", "schedule", t0 + 10],
        ["log_3", "webhook", t0 + 5],
      ];
      for (const [id, trigger, startedAt] of entries) {
        await db.query(
          `INSERT INTO log_entries (id, workspace_id, workflow_id, execution_id, level, trigger, started_at, ended_at,
           total_duration_ms, cost_total, cost_json)
         VALUES (@id, @workspaceId, 'wf_1', @id, 'info', @trigger, @startedAt, @startedAt, 0, 0, '{}')`,
          { id, workspaceId, trigger, startedAt },
        );
      }
      expect(await areas.inactivity.lastExecutionAt("wf_1", [])).toBe(t0 + 10);
      expect(await areas.inactivity.lastExecutionAt("wf_1", ["api", "webhook"])).toBe(t0 + 5);
      expect(await areas.inactivity.lastExecutionAt("wf_1", ["chat"])).toBeNull();
      expect(await areas.inactivity.lastExecutionAt("wf_2", [])).toBeNull();
    });

    it("pages the live, active subscriptions with a timer rule, in id order", async () => {
      const rule = (name: string) => ({ rule: name, threshold: 1, windowHours: 24 });
      await addSubscription(db, { id: "sub_a", workspaceId, alertRule: rule("no_activity") });
      await addSubscription(db, { id: "sub_b", workspaceId, alertRule: rule("consecutive_failures") });
      await addSubscription(db, { id: "sub_c", workspaceId, alertRule: rule("no_activity"), active: false });
      await addSubscription(db, { id: "sub_d", workspaceId, alertRule: rule("no_activity"), deletedAt: t0 });
      await addSubscription(db, { id: "sub_e", workspaceId, alertRule: null });
      await addSubscription(db, { id: "sub_f", workspaceId, alertRule: rule("no_activity") });
      await addSubscription(db, { id: "sub_g", workspaceId, alertRule: rule("no_activity") });
      expect(await areas.inactivity.watchedSubscriptionIds("", 2, ["no_activity"])).toEqual([
        "sub_a",
        "sub_f",
      ]);
      expect(await areas.inactivity.watchedSubscriptionIds("sub_f", 2, ["no_activity"])).toEqual(["sub_g"]);
      expect(await areas.inactivity.watchedSubscriptionIds("", 10, [])).toEqual([]);
    });
  },
);
