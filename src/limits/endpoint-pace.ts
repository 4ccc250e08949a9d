import type { Store } from "../store/store.js";
import type { Reservation } from "./token-bucket.js";

/**
 * D38's throttle: at most `throttlePerSecond` deliveries a second to one subscription's endpoint, however
 * many workers send them. The pace is a bucket of one token refilled at that rate, kept in the store that
 * every worker shares (SQLite's state file on one machine, PostgreSQL across machines, as the API's
 * buckets are, D11, D32), so no two workers can both send in the same interval. It is checked where D26's
 * delivery slots are (temporal/activities/delivery-activities.ts), before them.
 *
 * A delivery takes the next interval to come, in turn: it waits for it in its activity when it is near,
 * and otherwise is refused and waits in Temporal without holding a worker slot. "Near" is at most a second,
 * and at most `queuedPerEndpoint` intervals, so at most that many attempts of one endpoint wait in slots
 * at once, however busy it is.
 */
const queuedPerEndpoint = 10;
const longestWaitInSlotMs = 1_000;

/**
 * The place of the next delivery to the subscription's endpoint at its throttle (D38), its wait counted
 * from when this answers: the time the store took is already spent. Real time, not a test's clock: every
 * worker counts the pace in the same milliseconds.
 */
export async function takeEndpointPace(
  store: Store,
  subscriptionId: string,
  throttlePerSecond: number,
): Promise<Reservation> {
  const intervalMs = 1_000 / throttlePerSecond;
  const maxWaitMs = Math.min(longestWaitInSlotMs, queuedPerEndpoint * intervalMs);
  const shape = { requestsPerMinute: throttlePerSecond * 60, maxBurst: 1 };
  const askedAt = Date.now();
  const place = await store.rateLimits.reserve(`endpoint-pace:${subscriptionId}`, shape, maxWaitMs, askedAt);
  return { allowed: place.allowed, waitMs: Math.max(0, askedAt + place.waitMs - Date.now()) };
}
