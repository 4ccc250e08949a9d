import type { UserRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
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
