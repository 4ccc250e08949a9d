import { Code, ConnectError } from "@connectrpc/connect";
import { type ApiRateLimit, takeApiToken } from "../domain/api-rate-limit.js";
import type { PlanTable } from "../domain/plans.js";
import type { Caller } from "../services/caller.js";
import type { Store } from "../store/store.js";
import { isoFromMs } from "../util/time.js";

/** One authenticated request's take: the X-RateLimit-* headers every answer carries, and the refusal if empty. */
export interface RateLimitOutcome {
  headers: Headers;
  refusal?: ConnectError;
}

export type ApiRateLimiter = (caller: Caller) => Promise<RateLimitOutcome>;

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
