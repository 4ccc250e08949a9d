import { Code, ConnectError } from "@connectrpc/connect";
import type { UserRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { isoFromMs } from "../util/time.js";
import type { PlanTable } from "./plans.js";
import type { TakeResult } from "./token-bucket.js";

/** The outcome of one API call's take, with the refill rate the X-RateLimit-Limit header reports (D11). */
export interface ApiRateLimit extends TakeResult {
  requestsPerMinute: number;
}

/**
 * One bucket per user, shared by every endpoint and protocol (D11): the key names the user, not the
 * API key or the method, so a second key or another protocol does not buy a second allowance.
 */
export async function takeApiToken(
  store: Store,
  planLimits: PlanTable,
  user: UserRecord,
  nowMs: number,
): Promise<ApiRateLimit> {
  const shape = planLimits[user.plan].api;
  return {
    requestsPerMinute: shape.requestsPerMinute,
    // D23 as amended: the API bucket's take commits without an fsync.
    ...(await store.rateLimits.take(`api:${user.id}`, shape, nowMs, false)),
  };
}

/** One authenticated request's take: the X-RateLimit-* headers every answer carries, and the refusal if empty. */
export interface RateLimitOutcome {
  headers: Headers;
  refusal?: ConnectError;
}

/** Takes for the authenticated caller (services/caller.ts's Caller). */
export type ApiRateLimiter = (caller: { user: UserRecord }) => Promise<RateLimitOutcome>;

/**
 * The API rate limit (D11): every authenticated request takes one token from its user's bucket, and every
 * answer after that point, errors included, reports the bucket in X-RateLimit-* headers (D28).
 */
export function createApiRateLimiter(
  store: Store,
  planLimits: PlanTable,
  clock: () => number = Date.now,
): ApiRateLimiter {
  return async (caller) => {
    const limit = await takeApiToken(store, planLimits, caller.user, clock());
    const headers = rateLimitHeaders(limit);
    return limit.allowed ? { headers } : { headers, refusal: refusal(limit) };
  };
}

function rateLimitHeaders(limit: ApiRateLimit): Headers {
  return new Headers({
    "X-RateLimit-Limit": String(limit.requestsPerMinute),
    "X-RateLimit-Remaining": String(limit.remaining),
    "X-RateLimit-Reset": isoFromMs(limit.resetAtMs),
  });
}

/** The 429 (D11); the X-RateLimit-* headers are put on the answer by the front door, as on every answer. */
function refusal(limit: ApiRateLimit): ConnectError {
  return new ConnectError(
    `rate limit exceeded: ${limit.requestsPerMinute} requests per minute; retry after ${limit.retryAfterSeconds} s`,
    Code.ResourceExhausted,
    new Headers({ "Retry-After": String(limit.retryAfterSeconds) }),
  );
}
