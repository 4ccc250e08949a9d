import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LimitsSchema } from "../gen/flowlog/logs/v1/limits_pb.js";
import { computeLimits, takeExecutionToken } from "../src/services/limits/limits.js";
import { type ExecutionRecord, type Plan, plans, type UserRecord } from "../src/store/records.js";
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
  store.close();
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

const usageOf = (user: UserRecord) => computeLimits(store, user, now).usage;

describe("Limits object: workflow execution rate limits (spec Limits object, D12)", () => {
  // requests per minute / burst of sync executions, and the usage limit in USD, per D12.
  const d12: Record<Plan, [number, number, number]> = {
    free: [10, 20, 10],
    pro: [30, 60, 100],
    team: [60, 120, 500],
    enterprise: [120, 240, 5000],
  };

  it.each(plans)("shows the %s plan's buckets, async five times sync, full before any execution", (plan) => {
    const [requestsPerMinute, maxBurst, limit] = d12[plan];
    const limits = toJson(LimitsSchema, computeLimits(store, newUser(plan), now), {
      alwaysEmitImplicit: true,
    });
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
  });

  it("reading the limits takes nothing; an execution takes from its own mode's bucket", () => {
    const user = newUser();
    computeLimits(store, user, now);
    computeLimits(store, user, now);
    expect(takeExecutionToken(store, user, "sync", now)).toEqual({
      allowed: true,
      remaining: 19,
      resetAtMs: now + 6000,
    });
    const rates = computeLimits(store, user, now).workflowExecutionRateLimit;
    expect(rates?.syncExecutions).toMatchObject({ remaining: 19, resetAt: isoFromMs(now + 6000) });
    expect(rates?.asyncExecutions).toMatchObject({ remaining: 100, resetAt: isoFromMs(now) });
    takeExecutionToken(store, user, "async", now);
    expect(computeLimits(store, user, now).workflowExecutionRateLimit?.asyncExecutions?.remaining).toBe(99);
  });

  it("an empty bucket refuses the execution until the plan rate refills it", () => {
    const user = newUser();
    for (let i = 0; i < 20; i++) expect(takeExecutionToken(store, user, "sync", now).allowed).toBe(true);
    expect(takeExecutionToken(store, user, "sync", now)).toEqual({
      allowed: false,
      remaining: 0,
      resetAtMs: now + 6000,
      retryAfterSeconds: 6,
    });
    expect(computeLimits(store, user, now + 6000).workflowExecutionRateLimit?.syncExecutions?.remaining).toBe(
      1,
    );
  });
});

describe("Limits object: usage (spec Limits object, D12)", () => {
  it("sums cost.total of the user's billed executions in the current calendar month (UTC) only", () => {
    const user = newUser();
    const other = newUser();
    store.logs.insertExecutions([
      execution(user.id, february - 1, 100),
      execution(user.id, february, 1.25),
      execution(user.id, now, 2.5),
      execution(user.id, march - 1, 0.25),
      execution(user.id, march, 1000),
      execution(other.id, now, 50),
      execution(null, now, 70),
    ]);
    expect(usageOf(user)?.currentPeriodCost).toBe(4);
    expect(usageOf(other)?.currentPeriodCost).toBe(50);
    expect(computeLimits(store, user, march).usage?.currentPeriodCost).toBe(1000);
  });

  it("counts a retried log write once", () => {
    const user = newUser();
    const record = execution(user.id, now, 3);
    store.logs.insertExecution(record);
    store.logs.insertExecution(record);
    expect(usageOf(user)?.currentPeriodCost).toBe(3);
  });

  it("is exceeded from the plan's limit on, not before", () => {
    const under = newUser();
    const at = newUser("pro");
    store.logs.insertExecutions([
      execution(under.id, now, 4),
      execution(under.id, now, 5.5),
      execution(at.id, now, 60),
      execution(at.id, now, 40),
    ]);
    expect(usageOf(under)).toMatchObject({ currentPeriodCost: 9.5, limit: 10, isExceeded: false });
    expect(usageOf(at)).toMatchObject({ currentPeriodCost: 100, limit: 100, plan: "pro", isExceeded: true });
  });
});
