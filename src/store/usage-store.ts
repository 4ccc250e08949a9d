import type { BucketShape } from "../limits/plans.js";
import type { BucketRow } from "../limits/token-bucket.js";
import type { Db } from "./database.js";
import { bucketParams, bucketRowOf, peekBucketSql } from "./rate-limit-store.js";

/** A token bucket by key, with the shape it has for its user's plan. */
export interface BucketRef {
  key: string;
  shape: BucketShape;
}

export interface UsageQuery {
  userId: string;
  nowMs: number;
  sync: BucketRef;
  async: BucketRef;
}

export interface UsageSnapshot {
  /** Cost of the executions billed to the user in the calendar month (UTC) of `nowMs`, USD. */
  periodCost: number;
  sync: BucketRow;
  async: BucketRow;
}

/**
 * Every response body carries the limits object (D12), so its three figures come from one indexed
 * statement: both execution buckets, peeked, and the month's row of usage_periods, which triggers keep
 * up to date with log_entries (see migrations.ts) so no request sums a user's executions.
 */
const snapshotSql = `
  SELECT ${peekBucketSql("s", "sync")}, ${peekBucketSql("a", "async")}, coalesce(u.cost, 0) AS periodCost
  FROM (SELECT 1)
  LEFT JOIN rate_limit_buckets s ON s.key = @syncKey
  LEFT JOIN rate_limit_buckets a ON a.key = @asyncKey
  LEFT JOIN usage_periods u ON u.user_id = @userId
    AND u.period_start = unixepoch(@now / 1000, 'unixepoch', 'start of month') * 1000`;

/** Billing-period usage (D12), read together with the execution buckets it is shown beside. */
export class UsageStore {
  private readonly snapshotStatement;

  constructor(db: Db) {
    this.snapshotStatement = db.prepare(snapshotSql);
  }

  async snapshot({ userId, nowMs, sync, async }: UsageQuery): Promise<UsageSnapshot> {
    const row = this.snapshotStatement.get({
      userId,
      now: nowMs,
      syncKey: sync.key,
      asyncKey: async.key,
      ...bucketParams("sync", sync.shape),
      ...bucketParams("async", async.shape),
    }) as Record<string, number> & { periodCost: number };
    return { periodCost: row.periodCost, sync: bucketRowOf(row, "sync"), async: bucketRowOf(row, "async") };
  }
}
