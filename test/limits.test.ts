import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LimitsSchema } from "../gen/flowlog/logs/v1/limits_pb.js";
import { ConfigError, loadConfig } from "../src/config/config.js";
import { computeLimits, type ExecutionMode, takeExecutionToken } from "../src/limits/execution-limits.js";
import { defaultPlanLimits, type Plan, plans } from "../src/limits/plans.js";
import { retentionCutoff, workspaceRetention } from "../src/limits/retention.js";
import { migrations } from "../src/store/migrations.js";
import type { ExecutionRecord, UserRecord } from "../src/store/records.js";
import { openSqlite } from "../src/store/sqlite-addon.js";
import { openStore, type Store } from "../src/store/store.js";
import { isoFromMs } from "../src/util/time.js";

const now = Date.UTC(2026, 1, 20, 12, 0, 0);
const february = Date.UTC(2026, 1, 1);
const march = Date.UTC(2026, 2, 1);
let dir: string;
let store: Store;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "flowlog-limits-"));
  store = openStore({ file: path.join(dir, "flowlog.sqlite") });
});
afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

let lastUser = 0;
function newUser(plan: Plan = "free"): UserRecord {
  const id = `user-${++lastUser}`;
  return { id, email: `${id}@example.test`, plan, createdAt: 0 };
}

let lastExecution = 0;
function execution(billedUserId: string | null, startedAt: number, cost: number): ExecutionRecord {
  const id = `ex-${++lastExecution}`;
  return {
    entry: {
      id: `log-${id}`,
      workspaceId: "ws",
      workflowId: "wf",
      folderId: null,
      executionId: id,
      billedUserId,
      level: "info",
      trigger: "api",
      startedAt,
      endedAt: startedAt + 10,
      totalDurationMs: 10,
      cost: { total: cost, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} },
      files: null,
      traceSpans: [],
      finalOutput: undefined,
    },
    workflowState: {},
  };
}

/** The limits object, and one execution's take, under D12's default plan table. */
const limitsOf = (user: UserRecord, at = now) => computeLimits(store, defaultPlanLimits, user, at);
const take = (user: UserRecord, mode: ExecutionMode) =>
  takeExecutionToken(store, defaultPlanLimits, user, mode, now);
const usageOf = async (user: UserRecord) => (await limitsOf(user)).usage;

describe("Limits object: workflow execution rate limits (spec Limits object, D12)", () => {
  // requests per minute / burst of sync executions, and the usage limit in USD, per D12.
  const d12: Record<Plan, [number, number, number]> = {
    free: [10, 20, 10],
    pro: [30, 60, 100],
    team: [60, 120, 500],
    enterprise: [120, 240, 5000],
  };

  it.each(plans)(
    "shows the %s plan's buckets, async five times sync, full before any execution",
    async (plan) => {
      const [requestsPerMinute, maxBurst, limit] = d12[plan];
      const limits = toJson(LimitsSchema, await limitsOf(newUser(plan)), { alwaysEmitImplicit: true });
      expect(limits).toEqual({
        workflowExecutionRateLimit: {
          sync: { requestsPerMinute, maxBurst, remaining: maxBurst, resetAt: isoFromMs(now) },
          async: {
            requestsPerMinute: 5 * requestsPerMinute,
            maxBurst: 5 * maxBurst,
            remaining: 5 * maxBurst,
            resetAt: isoFromMs(now),
          },
        },
        usage: { currentPeriodCost: 0, limit, plan, isExceeded: false },
      });
    },
  );

  it("reading the limits takes nothing; an execution takes from its own mode's bucket", async () => {
    const user = newUser();
    await limitsOf(user);
    await limitsOf(user);
    expect(await take(user, "sync")).toEqual({
      allowed: true,
      remaining: 19,
      resetAtMs: now + 6000,
    });
    const rates = (await limitsOf(user)).workflowExecutionRateLimit;
    expect(rates?.syncExecutions).toMatchObject({ remaining: 19, resetAt: isoFromMs(now + 6000) });
    expect(rates?.asyncExecutions).toMatchObject({ remaining: 100, resetAt: isoFromMs(now) });
    await take(user, "async");
    expect((await limitsOf(user)).workflowExecutionRateLimit?.asyncExecutions?.remaining).toBe(99);
  });

  it("an empty bucket refuses the execution until the plan rate refills it", async () => {
    const user = newUser();
    for (let i = 0; i < 20; i++) expect((await take(user, "sync")).allowed).toBe(true);
    expect(await take(user, "sync")).toEqual({
      allowed: false,
      remaining: 0,
      resetAtMs: now + 6000,
      retryAfterSeconds: 6,
    });
    expect((await limitsOf(user, now + 6000)).workflowExecutionRateLimit?.syncExecutions?.remaining).toBe(1);
  });
});

describe("Limits object: usage (spec Limits object, D12)", () => {
  it("sums cost.total of the user's billed executions in the current calendar month (UTC) only", async () => {
    const user = newUser();
    const other = newUser();
    await store.logs.insertExecutions([
      execution(user.id, february - 1, 100),
      execution(user.id, february, 1.25),
      execution(user.id, now, 2.5),
      execution(user.id, march - 1, 0.25),
      execution(user.id, march, 1000),
      execution(other.id, now, 50),
      execution(null, now, 70),
    ]);
    expect((await usageOf(user))?.currentPeriodCost).toBe(4);
    expect((await usageOf(other))?.currentPeriodCost).toBe(50);
    expect((await limitsOf(user, march)).usage?.currentPeriodCost).toBe(1000);
  });

  it("counts a retried log write once", async () => {
    const user = newUser();
    const record = execution(user.id, now, 3);
    await store.logs.insertExecution(record);
    await store.logs.insertExecution(record);
    expect((await usageOf(user))?.currentPeriodCost).toBe(3);
  });

  it("is exceeded from the plan's limit on, not before", async () => {
    const under = newUser();
    const at = newUser("pro");
    await store.logs.insertExecutions([
      execution(under.id, now, 4),
      execution(under.id, now, 5.5),
      execution(at.id, now, 60),
      execution(at.id, now, 40),
    ]);
    expect(await usageOf(under)).toMatchObject({ currentPeriodCost: 9.5, limit: 10, isExceeded: false });
    expect(await usageOf(at)).toMatchObject({
      currentPeriodCost: 100,
      limit: 100,
      plan: "pro",
      isExceeded: true,
    });
  });

  it("is the exact decimal sum of the executions' nano-dollar costs, with no float noise (D30)", async () => {
    const tenths = newUser();
    await store.logs.insertExecutions([execution(tenths.id, now, 0.1), execution(tenths.id, now, 0.2)]);
    expect((await usageOf(tenths))?.currentPeriodCost).toBe(0.3);

    // Agent-sized costs in whole nano-dollars (as model-prices.ts rounds them), many of them: a float
    // running total drifts (216.815694400001 in issue 14); the month's sum must not.
    const busy = newUser("enterprise");
    const nanos = Array.from({ length: 2000 }, (_, i) => 108_407_847 + ((i * 7_919) % 1_000));
    const exactNanos = nanos.reduce((sum, n) => sum + BigInt(n), 0n);
    const drifting = nanos.reduce((sum, n) => sum + n / 1e9, 0);
    expect(drifting).not.toBe(Number(exactNanos) / 1e9);
    await store.logs.insertExecutions(nanos.map((n) => execution(busy.id, now, n / 1e9)));

    const cost = (await usageOf(busy))?.currentPeriodCost ?? Number.NaN;
    expect(cost).toBe(Number(exactNanos) / 1e9);
    expect(String(cost).split(".")[1]?.length ?? 0).toBeLessThanOrEqual(9);
    const json = toJson(LimitsSchema, await limitsOf(busy), { alwaysEmitImplicit: true }) as {
      usage: unknown;
    };
    expect(JSON.stringify(json.usage)).toContain(`"currentPeriodCost":${String(Number(exactNanos) / 1e9)},`);
  });

  it("reads a month summed as floats before the upgrade as its exact sum once migrated (D30)", async () => {
    const file = path.join(dir, "before-d30.sqlite");
    const user = newUser();
    const before = openStore({ file });
    await before.logs.insertExecutions(
      Array.from({ length: 20 }, (_, i) => execution(user.id, now, (10_840_784_720 + i) / 1e9)),
    );
    await before.close();
    // The state an older flowlog left: a drifted running total that the D30 migration takes again.
    const db = openSqlite(file);
    db.prepare("UPDATE usage_periods SET cost = cost + 1e-12").run();
    db.exec(migrations.find((sql) => sql.includes("USD amounts are exact to 1e-9")) as string);
    db.close();

    const after = openStore({ file });
    try {
      const cost = (await computeLimits(after, defaultPlanLimits, user, now)).usage?.currentPeriodCost;
      expect(cost).toBe(216.81569459);
    } finally {
      await after.close();
    }
  });
});

describe("A workspace's retention window (D41)", () => {
  const table = { ...defaultPlanLimits, enterprise: { ...defaultPlanLimits.enterprise, retentionDays: 0 } };

  it("is the best plan of its members, the first plan's when it has none", () => {
    expect(workspaceRetention(defaultPlanLimits, ["free", "team", "pro"], null)).toEqual({
      plan: "team",
      planDays: 90,
      workspaceDays: null,
      days: 90,
    });
    expect(workspaceRetention(defaultPlanLimits, [], null)).toMatchObject({ plan: "free", days: 7 });
  });

  it("is its own choice when shorter, and the plan's when the plan was lowered below the choice", () => {
    expect(workspaceRetention(defaultPlanLimits, ["team"], 30).days).toBe(30);
    expect(workspaceRetention(defaultPlanLimits, ["free"], 30).days).toBe(7);
    // A plan that keeps entries forever keeps them as long as the workspace chose.
    expect(workspaceRetention(table, ["enterprise"], 400).days).toBe(400);
    expect(workspaceRetention(table, ["enterprise"], null).days).toBe(0);
  });

  it("expires entries started before now minus the window, and none under no limit", () => {
    expect(retentionCutoff(Date.parse("2027-03-10T00:00:00Z"), 7)).toBe(Date.parse("2027-03-03T00:00:00Z"));
    expect(retentionCutoff(Date.parse("2027-03-10T00:00:00Z"), 0)).toBeUndefined();
  });
});

describe("Plan limits are configurable: FLOWLOG_PLAN_LIMITS (D12, all defaults configurable)", () => {
  const configured = (value: string) => loadConfig({ FLOWLOG_PLAN_LIMITS: value }).planLimits;

  /** The ConfigError a value is refused with; its message must never repeat the value. */
  function refusal(value: string): ConfigError {
    try {
      configured(value);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      expect(error.message).not.toContain(value);
      return error;
    }
    throw new Error("the value was accepted");
  }

  it("without the variable, the table is D12's defaults", () => {
    expect(loadConfig({}).planLimits).toEqual(defaultPlanLimits);
    expect(configured("")).toEqual(defaultPlanLimits);
  });

  it("merges a deep-partial override over the defaults, leaving every other figure as it was", () => {
    const table = configured(
      '{"enterprise":{"api":{"requestsPerMinute":600000,"maxBurst":600000}},"free":{"usageLimitUsd":20}}',
    );
    expect(table).toEqual({
      ...defaultPlanLimits,
      enterprise: { ...defaultPlanLimits.enterprise, api: { requestsPerMinute: 600000, maxBurst: 600000 } },
      free: { ...defaultPlanLimits.free, usageLimitUsd: 20 },
    });
    const burstOnly = configured('{"pro":{"syncExecutions":{"maxBurst":7}}}').pro.syncExecutions;
    expect(burstOnly).toEqual({ requestsPerMinute: 30, maxBurst: 7 });
  });

  it("each plan keeps logs for D41's days, which the variable changes, 0 keeping them forever", () => {
    const days = (table: typeof defaultPlanLimits) => plans.map((plan) => table[plan].retentionDays);
    expect(days(defaultPlanLimits)).toEqual([7, 30, 90, 365]);
    expect(days(configured('{"free":{"retentionDays":14},"enterprise":{"retentionDays":0}}'))).toEqual([
      14, 30, 90, 0,
    ]);
    expect(refusal('{"pro":{"retentionDays":1.5}}').problems).toEqual([
      "FLOWLOG_PLAN_LIMITS.pro.retentionDays: must be a whole number of days, 0 for no limit",
    ]);
    expect(refusal('{"pro":{"retentionDays":-3}}').problems).toEqual([
      "FLOWLOG_PLAN_LIMITS.pro.retentionDays: must be a whole number of days, 0 for no limit",
    ]);
  });

  it("the limits object reports the configured figures", async () => {
    const table = configured('{"free":{"usageLimitUsd":20,"asyncExecutions":{"maxBurst":3}}}');
    const limits = await computeLimits(store, table, newUser("free"), now);
    expect(limits.usage).toMatchObject({ limit: 20, isExceeded: false });
    expect(limits.workflowExecutionRateLimit?.asyncExecutions).toMatchObject({ maxBurst: 3, remaining: 3 });
  });

  it("refuses an unknown plan or key, naming it by its path", () => {
    expect(refusal('{"enterprize":{"api":{"maxBurst":5}}}').problems).toEqual([
      "FLOWLOG_PLAN_LIMITS.enterprize: unknown plan; expected one of free, pro, team, enterprise",
    ]);
    expect(refusal('{"team":{"api":{"burst":5}}}').problems).toEqual([
      "FLOWLOG_PLAN_LIMITS.team.api.burst: unknown bucket setting; expected one of requestsPerMinute, maxBurst",
    ]);
  });

  it("refuses a bad number, naming its path and not the number", () => {
    expect(refusal('{"enterprise":{"api":{"maxBurst":2.5}}}').problems).toEqual([
      "FLOWLOG_PLAN_LIMITS.enterprise.api.maxBurst: must be a positive integer",
    ]);
    expect(
      refusal('{"pro":{"syncExecutions":{"requestsPerMinute":0}},"free":{"usageLimitUsd":-42}}').problems,
    ).toEqual([
      "FLOWLOG_PLAN_LIMITS.free.usageLimitUsd: must be a non-negative number",
      "FLOWLOG_PLAN_LIMITS.pro.syncExecutions.requestsPerMinute: must be a positive integer",
    ]);
    expect(refusal('{"team":{"api":{"requestsPerMinute":"600"}}}').problems).toEqual([
      "FLOWLOG_PLAN_LIMITS.team.api.requestsPerMinute: must be a positive integer",
    ]);
  });

  it("refuses text that is not JSON, or JSON that is not an object, without quoting it", () => {
    expect(refusal('{"enterprise": sk-not-json').problems).toEqual(["FLOWLOG_PLAN_LIMITS: must be JSON"]);
    expect(refusal("[600000]").problems).toEqual(["FLOWLOG_PLAN_LIMITS: must be a JSON object"]);
  });
});
