import type { Store } from "../store/store.js";
import type { BucketShape } from "./plans.js";
import type { TakeResult } from "./token-bucket.js";

/**
 * The bounds of the delivery log (D40) that are not the .proto's to declare: the page sizes of the
 * log and of a delivery's attempts (their 1,000 maximums are declared on the requests), how often one delivery may be
 * sent again, and how often a subscription may be tested.
 */

/** Deliveries on a page of the delivery log when the request does not say (D40). */
export const defaultDeliveriesPageSize = 100;

/** Attempts of a delivery answered when the request does not say (D40: the newest 100). */
export const defaultAttemptsPageSize = 100;

/**
 * Redeliveries of one delivery (D40): each is a series of up to D19's attempts sent to the receiver
 * again, so without a bound one delivery could have a receiver sent its event without end.
 */
export const maxRedeliveries = 20;

/** The series a delivery may have: its first and each redelivery (D19, D40). */
export const maxDeliverySeries = 1 + maxRedeliveries;

/**
 * Test sends of one subscription (D40): 10 a minute. A test sends through the operator's SMTP server or
 * to the tenant's URL, so it is bounded apart from the API's own rate (D11). The same token-bucket
 * arithmetic as D11's: 10 at once, then one more every 6 s.
 */
export const testSendLimit: BucketShape = { requestsPerMinute: 10, maxBurst: 10 };

/**
 * Takes a test send of the subscription from its bucket in the store, which every API process on the
 * machine (SQLite) or of the deployment (PostgreSQL) shares, as it shares the API's (D11, D32).
 */
export async function takeTestSend(store: Store, subscriptionId: string, nowMs: number): Promise<TakeResult> {
  // Like the API's buckets (D23 as amended): a power cut can only refill it a little.
  return store.rateLimits.take(`test-send:${subscriptionId}`, testSendLimit, nowMs, false);
}
