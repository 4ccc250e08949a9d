import type { UnaryResponse } from "@connectrpc/connect";
import { loadConfig } from "../src/config/config.js";
import { createApiRateLimiter } from "../src/limits/api-rate-limit.js";
import type { TakeResult } from "../src/limits/token-bucket.js";
import { seedWorkspace } from "../src/seed/seed.js";
import type { UserRecord } from "../src/store/records.js";
import type { Store } from "../src/store/store.js";
import { type Bench, type BenchOptions, ms, ratio, type Table } from "./support/report.js";
import { meanMicros, sample } from "./support/sample.js";
import { openBenchStore } from "./support/store.js";

/** The plan table the server would run with: D12's defaults, or FLOWLOG_PLAN_LIMITS over them. */
const { planLimits } = loadConfig();
const shape = planLimits.enterprise.api;
const calls = { quick: 500, full: 20_000 };
/** Buckets taken from in turn, so the bench does not measure one hot row only. */
const users = 1_000;

/**
 * The API rate limit (issue 7, item 6, D11): one token bucket take in shared SQLite state against no
 * limiter, and the interceptor's cost per request against the same request without it.
 */
export const rateLimitBench: Bench = {
  name: "rate-limit",
  async run(options: BenchOptions) {
    const count = options.quick ? calls.quick : calls.full;
    const bench = await openBenchStore();
    try {
      await seedWorkspace(bench.store, { workspaceId: bench.workspaceId, executions: 1_000, seed: "bench" });
      // A clock a minute ahead on every call keeps every bucket full, so every take is allowed and writes.
      let now = Date.now();
      const clock = () => (now += 60_000);
      const noop = (_key: string, _shape: typeof shape, _nowMs: number): TakeResult | undefined => undefined;
      // The API's take commits without an fsync (D23 as amended); an execution bucket's take with one.
      // SQLite's take runs its statement before it returns its promise, so timing the call times the write.
      const takeOf = (durable: boolean) => (i: number) =>
        bench.store.rateLimits.take(`api:usr_${i % users}`, shape, clock(), durable);
      const noopMicros = meanMicros((i) => noop(`api:usr_${i % users}`, shape, clock()), count);
      const row = (name: string, durable: boolean) => {
        const take = takeOf(durable);
        const micros = meanMicros(take, count);
        const latency = sample(() => take(Math.floor(Math.random() * users)), { count, maxMs: 10_000 });
        return [
          name,
          count,
          micros.toFixed(1),
          ms(latency.p50),
          ms(latency.p99),
          ms(latency.max),
          ratio(micros / noopMicros),
        ];
      };
      return [
        {
          title: "rate-limit: one take from a token bucket (SQLite UPSERT, WAL)",
          columns: ["variant", "calls", "mean µs", "p50 ms", "p99 ms", "max ms", "take/no-op"],
          rows: [
            row("API take (synchronous=NORMAL, D23 as amended)", false),
            row("execution bucket take (synchronous=FULL)", true),
            ["no-op", count, noopMicros.toFixed(3), "", "", "", ratio(1)],
          ],
        },
        await perRequest(
          { store: bench.store, user: bench.user, workspaceId: bench.workspaceId },
          clock,
          count,
        ),
      ];
    } finally {
      await bench.dispose();
    }
  },
};

/**
 * The rate limiter around a handler that reads one 100-row page of a small store, against
 * the handler alone: what the step adds to a typical authenticated call, before any transport.
 */
async function perRequest(
  context: { store: Store; user: UserRecord; workspaceId: string },
  clock: () => number,
  count: number,
): Promise<Table> {
  const { store, user, workspaceId } = context;
  const page = {
    order: "desc",
    limit: 100,
    withCostDetail: false,
    withTraceSpans: false,
    withFinalOutput: false,
  } as const;
  const handler = async () => {
    await store.logs.list({ workspaceId }, page);
    return { header: new Headers(), trailer: new Headers() } as UnaryResponse;
  };
  const limiter = createApiRateLimiter(store, planLimits, clock);
  const caller = { keyId: "key_bench", user };
  // What the front door and its interceptor do around a handler: take, then put the headers on the answer.
  const limited = async () => {
    const { headers } = await limiter(caller);
    const response = await handler();
    for (const [name, value] of headers) response.header.set(name, value);
    return response;
  };
  const bare = await sampleAsync(() => handler(), count);
  const withLimit = await sampleAsync(() => limited(), count);
  return {
    title: "rate-limit: per-request overhead of the limiter (handler reads one 100-row page)",
    columns: ["variant", "requests", "mean µs", "overhead µs", "with/without"],
    rows: [
      ["without limiter", count, bare.toFixed(1), "", ratio(1)],
      ["with limiter", count, withLimit.toFixed(1), (withLimit - bare).toFixed(1), ratio(withLimit / bare)],
    ],
  };
}

/** Mean microseconds of an async call awaited one at a time, after a short warm-up. */
async function sampleAsync(fn: () => Promise<unknown>, count: number): Promise<number> {
  for (let i = 0; i < 50; i++) await fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await fn();
  return Number(process.hrtime.bigint() - start) / 1_000 / count;
}
