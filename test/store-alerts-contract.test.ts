import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type AlertClaim,
  AlertsStore,
  alertCooldownMs,
  type ResolutionClaim,
} from "../src/store/alerts-store.js";
import { LogsStore } from "../src/store/logs-store.js";
import { PostgresAlertsStore } from "../src/store/postgres/alerts-store.js";
import { PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import type { ExecutionRecord, Level, Trigger } from "../src/store/records.js";
import type { StoreArea } from "../src/store/store.js";
import { execution } from "./support/flowlog.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { addSubscription, type ContractDatabase, storeKinds } from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

interface Areas {
  alerts: StoreArea<AlertsStore>;
  /** Where the rules' executions come from: the logs area of the same kind. */
  logs: { insertExecutions(records: ExecutionRecord[]): unknown };
}

const kinds = storeKinds<Areas>(
  {
    sqlite: (db) => ({ alerts: new AlertsStore(db), logs: new LogsStore(db) }),
    postgres: (pool) => ({ alerts: new PostgresAlertsStore(pool), logs: new PostgresLogsStore(pool) }),
  },
  () => server,
);

const account = { userId: "usr_alerts", workspaceId: "ws_alerts", key: "", keyId: "" };
const t0 = Date.parse("2026-11-01T00:00:00.000Z");
const hour = 60 * 60 * 1000;

interface Run {
  at: number;
  level?: Level;
  trigger?: Trigger;
  durationMs?: number;
}

function run(workflowId: string, { at, level = "info", trigger = "api", durationMs = 1000 }: Run) {
  return execution(account, workflowId, { startedAt: at, totalDurationMs: durationMs, level, trigger });
}

describe.each(kinds)("the alert rules' data on %s (D21, D34, D32)", (_, open) => {
  let db: ContractDatabase<Areas>;
  let alerts: Areas["alerts"];
  beforeEach(async () => {
    db = await open();
    alerts = db.areas.alerts;
    await addSubscription(db, { id: "sub_rule", workspaceId: account.workspaceId, url: "https://x.test/h" });
  });
  afterEach(() => db.close());

  async function log(...records: ExecutionRecord[]) {
    await db.areas.logs.insertExecutions(records);
    return records.map((record) => record.entry);
  }

  describe("what a rule reads of a workflow's executions", () => {
    it("the last levels: newest first, up to a time and a count, of that workflow only", async () => {
      await log(
        run("wf_a", { at: t0, level: "error" }),
        run("wf_a", { at: t0 + 1000 }),
        run("wf_a", { at: t0 + 2000, level: "error" }),
        run("wf_a", { at: t0 + 3000 }),
        run("wf_b", { at: t0 + 2500, level: "error" }),
      );
      const scope = { workflowId: "wf_a", triggers: [] };
      expect(await alerts.lastLevels(scope, t0 + 2000, 10)).toEqual(["error", "info", "error"]);
      expect(await alerts.lastLevels(scope, t0 + 3000, 2)).toEqual(["info", "error"]);
      expect(await alerts.lastLevels({ workflowId: "wf_none", triggers: [] }, t0 + 3000, 2)).toEqual([]);
    });

    it("the trigger filter narrows what a rule sees; an empty one means all triggers", async () => {
      await log(
        run("wf_a", { at: t0, trigger: "schedule", level: "error" }),
        run("wf_a", { at: t0 + 1000, trigger: "api" }),
        run("wf_a", { at: t0 + 2000, trigger: "webhook", level: "error" }),
      );
      const levels = (triggers: Trigger[]) =>
        alerts.lastLevels({ workflowId: "wf_a", triggers }, t0 + 5000, 10);
      expect(await levels(["schedule"])).toEqual(["error"]);
      expect(await levels(["schedule", "webhook"])).toEqual(["error", "error"]);
      expect(await levels([])).toEqual(["error", "info", "error"]);
      const stats = await alerts.windowStats({
        workflowId: "wf_a",
        triggers: ["api", "webhook"],
        fromStartedAt: t0,
        untilStartedAt: t0 + 5000,
      });
      expect(stats).toMatchObject({ executions: 2, errors: 1 });
    });

    it("a window counts executions and errors and averages durations, both ends included", async () => {
      const [first, , , tripping] = await log(
        run("wf_a", { at: t0, durationMs: 100, level: "error" }),
        run("wf_a", { at: t0 + hour, durationMs: 250 }),
        run("wf_a", { at: t0 + 2 * hour, durationMs: 401, level: "error" }),
        run("wf_a", { at: t0 + 2 * hour, durationMs: 5000 }),
        run("wf_a", { at: t0 + 2 * hour + 1, durationMs: 7 }),
      );
      const window = { workflowId: "wf_a", triggers: [], fromStartedAt: t0, untilStartedAt: t0 + 2 * hour };
      expect(await alerts.windowStats(window)).toEqual({
        executions: 4,
        errors: 2,
        averageDurationMs: (100 + 250 + 401 + 5000) / 4,
      });
      expect(await alerts.windowStats({ ...window, excludeLogId: tripping?.id })).toEqual({
        executions: 3,
        errors: 2,
        averageDurationMs: 751 / 3,
      });
      expect(
        await alerts.windowStats({ ...window, fromStartedAt: (first?.startedAt ?? 0) + 1 }),
      ).toMatchObject({
        executions: 3,
        errors: 1,
      });
    });

    it("an empty window has no average", async () => {
      expect(
        await alerts.windowStats({
          workflowId: "wf_a",
          triggers: [],
          fromStartedAt: t0,
          untilStartedAt: t0 + hour,
        }),
      ).toEqual({ executions: 0, errors: 0, averageDurationMs: null });
    });

    it("a workflow is first seen at its earliest execution, whatever its trigger", async () => {
      expect(await alerts.firstStartedAt("wf_a")).toBeUndefined();
      await log(run("wf_a", { at: t0 + hour, trigger: "chat" }), run("wf_a", { at: t0 + 3 * hour }));
      expect(await alerts.firstStartedAt("wf_a")).toBe(t0 + hour);
    });

    it("reads one workflow's rows through its time index, never the whole table", async () => {
      // Realistic size and spread, analysed: on a nearly empty table any plan is as good.
      const records = Array.from({ length: 4000 }, (_, n) =>
        run(`wf_${n % 200}`, { at: t0 + n * 1000, trigger: n % 3 ? "api" : "schedule" }),
      );
      await log(...records);
      await db.query("ANALYZE");
      const plan = (await alerts.explain()).join("\n");
      expect(plan).toMatch(/log_entries_by_workflow_time/);
      expect(plan).not.toMatch(/^SCAN (l|log_entries)\b|Seq Scan on log_entries/m);
    });
  });

  describe("firing: one alert per (subscription, workflow) per cooldown (D21), alternating with resolution (D34)", () => {
    let events = 0;
    const claimOf = (firedAt: number, overrides: Partial<AlertClaim> = {}): AlertClaim => ({
      subscriptionId: "sub_rule",
      workflowId: "wf_a",
      rule: "error_count",
      firedAt,
      eventId: `evt_${++events}`,
      reason: "3 executions failed in the last 24 h, more than 2",
      ...overrides,
    });
    const resolutionOf = (resolvedAt: number, overrides: Partial<ResolutionClaim> = {}): ResolutionClaim => ({
      subscriptionId: "sub_rule",
      workflowId: "wf_a",
      rule: "error_count",
      resolvedAt,
      eventId: `evt_${++events}`,
      reason: "1 executions failed in the last 24 h, no more than 2",
      ...overrides,
    });

    it("the first firing is claimed, and shown as firing", async () => {
      const claim = claimOf(t0);
      expect(await alerts.claim(claim)).toBe(true);
      expect(await alerts.state("sub_rule", "wf_a")).toEqual({
        subscriptionId: "sub_rule",
        workflowId: "wf_a",
        rule: "error_count",
        lastFiredAt: t0,
        lastEventId: claim.eventId,
        reason: claim.reason,
        status: "firing",
        resolvedAt: null,
        resolutionReason: null,
        resolvedEventId: null,
      });
    });

    it("a firing pair does not fire again, even after the cooldown, until it is resolved", async () => {
      expect(await alerts.claim(claimOf(t0))).toBe(true);
      expect(await alerts.claim(claimOf(t0 + 1))).toBe(false);
      expect(await alerts.claim(claimOf(t0 + 5 * alertCooldownMs))).toBe(false);
      expect(await alerts.state("sub_rule", "wf_a")).toMatchObject({ lastFiredAt: t0 });
    });

    it("once resolved, a second alert within the hour of the last is suppressed and one at the hour allowed", async () => {
      expect(await alerts.claim(claimOf(t0))).toBe(true);
      expect(await alerts.resolve(resolutionOf(t0 + 1))).toMatchObject({ status: "resolved" });
      expect(await alerts.claim(claimOf(t0 + alertCooldownMs - 1))).toBe(false);
      const again = claimOf(t0 + alertCooldownMs);
      expect(await alerts.claim(again)).toBe(true);
      expect(await alerts.states("sub_rule")).toEqual([
        expect.objectContaining({
          lastFiredAt: t0 + alertCooldownMs,
          lastEventId: again.eventId,
          status: "firing",
          resolvedAt: null,
          resolutionReason: null,
          resolvedEventId: null,
        }),
      ]);
    });

    it("a firing of a rule the subscription no longer has gives way to the new rule's, after the cooldown", async () => {
      expect(await alerts.claim(claimOf(t0))).toBe(true);
      expect(await alerts.claim(claimOf(t0 + alertCooldownMs - 1, { rule: "failure_rate" }))).toBe(false);
      expect(await alerts.claim(claimOf(t0 + alertCooldownMs, { rule: "failure_rate" }))).toBe(true);
      expect(await alerts.state("sub_rule", "wf_a")).toMatchObject({
        rule: "failure_rate",
        status: "firing",
      });
    });

    it("the cooldown can be given (the no-activity watcher's scaled hours)", async () => {
      expect(await alerts.claim(claimOf(t0, { cooldownMs: 10 }))).toBe(true);
      await alerts.resolve(resolutionOf(t0 + 1));
      expect(await alerts.claim(claimOf(t0 + 9, { cooldownMs: 10 }))).toBe(false);
      expect(await alerts.claim(claimOf(t0 + 10, { cooldownMs: 10 }))).toBe(true);
    });

    it("a retried evaluation of the same event finds its own claim and changes nothing", async () => {
      const claim = claimOf(t0, { cooldownMs: 0 });
      expect(await alerts.claim(claim)).toBe(true);
      expect(await alerts.claim(claim)).toBe(true);
      const resolved = await alerts.resolve(resolutionOf(t0 + 1));
      expect(await alerts.claim(claim)).toBe(true);
      expect(await alerts.state("sub_rule", "wf_a")).toEqual(resolved);
    });

    it("several evaluations at once, each on its own connection, fire once", async () => {
      const others = await Promise.all(Array.from({ length: 8 }, () => db.connect()));
      const claimed = await Promise.all(others.map((other) => other.alerts.claim(claimOf(t0))));
      expect(claimed.filter(Boolean)).toHaveLength(1);
    });

    it("one event claimed at once by several processes (a retry racing its try) is claimed by each", async () => {
      const others = await Promise.all(Array.from({ length: 8 }, () => db.connect()));
      const claim = claimOf(t0);
      const claimed = await Promise.all(others.map((other) => other.alerts.claim(claim)));
      expect(claimed).toEqual(others.map(() => true));
      expect(await alerts.state("sub_rule", "wf_a")).toMatchObject({ lastEventId: claim.eventId });
    });

    it("a resolution ends the firing of its rule, with when, why and its event", async () => {
      const claim = claimOf(t0);
      await alerts.claim(claim);
      const resolution = resolutionOf(t0 + hour);
      const expected = {
        subscriptionId: "sub_rule",
        workflowId: "wf_a",
        rule: "error_count",
        lastFiredAt: t0,
        lastEventId: claim.eventId,
        reason: claim.reason,
        status: "resolved",
        resolvedAt: t0 + hour,
        resolutionReason: resolution.reason,
        resolvedEventId: resolution.eventId,
      };
      expect(await alerts.resolve(resolution)).toEqual(expected);
      expect(await alerts.state("sub_rule", "wf_a")).toEqual(expected);
    });

    it("nothing is resolved that did not fire, is of another rule, fired later, or is already resolved", async () => {
      expect(await alerts.resolve(resolutionOf(t0))).toBeUndefined();
      await alerts.claim(claimOf(t0));
      expect(await alerts.resolve(resolutionOf(t0 + 1, { rule: "failure_rate" }))).toBeUndefined();
      expect(await alerts.resolve(resolutionOf(t0 - 1))).toBeUndefined();
      expect(await alerts.resolve(resolutionOf(t0))).toMatchObject({ status: "resolved", resolvedAt: t0 });
      expect(await alerts.resolve(resolutionOf(t0 + 1))).toBeUndefined();
    });

    it("a retried resolution finds its own, unchanged", async () => {
      await alerts.claim(claimOf(t0));
      const resolution = resolutionOf(t0 + 1);
      const resolved = await alerts.resolve(resolution);
      expect(await alerts.resolve({ ...resolution, resolvedAt: t0 + 2 })).toEqual(resolved);
    });

    it("several resolutions at once, each on its own connection, resolve once", async () => {
      await alerts.claim(claimOf(t0));
      const others = await Promise.all(Array.from({ length: 8 }, () => db.connect()));
      const resolved = await Promise.all(others.map((other) => other.alerts.resolve(resolutionOf(t0 + 1))));
      expect(resolved.filter((state) => state !== undefined)).toHaveLength(1);
    });

    it("a subscription's states are listed in byte order of workflow id", async () => {
      for (const workflowId of ["wf_a", "wf__", "wf_B", "wf_-"])
        await alerts.claim(claimOf(t0, { workflowId }));
      expect((await alerts.states("sub_rule")).map((state) => state.workflowId)).toEqual([
        "wf_-",
        "wf_B",
        "wf__",
        "wf_a",
      ]);
      expect(await alerts.states("sub_none")).toEqual([]);
      expect(await alerts.state("sub_rule", "wf_none")).toBeUndefined();
    });
  });
});
