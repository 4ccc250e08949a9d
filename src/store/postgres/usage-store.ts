import { bucketParams, bucketRowOf } from "../rate-limit-store.js";
import type { StoreArea } from "../store.js";
import type { UsageQuery, UsageSnapshot, UsageStore } from "../usage-store.js";
import type { PostgresPool } from "./database.js";
import { namedStatement } from "./named-parameters.js";
import { peekBucketSql } from "./rate-limit-store.js";

/**
 * Both execution buckets, peeked, and the month's usage_periods row, in one statement (D12). The month
 * starts where the usage trigger (migrations.ts) starts it, by the same expression.
 */
const snapshot = namedStatement(`
  SELECT ${peekBucketSql("s", "sync")}, ${peekBucketSql("a", "async")}, coalesce(u.cost, 0) AS "periodCost"
  FROM (SELECT 1) AS one
  LEFT JOIN rate_limit_buckets s ON s.key = @syncKey
  LEFT JOIN rate_limit_buckets a ON a.key = @asyncKey
  LEFT JOIN usage_periods u ON u.user_id = @userId
    AND u.period_start =
      (extract(epoch FROM date_trunc('month', to_timestamp(@now::bigint / 1000) AT TIME ZONE 'UTC')) * 1000)::bigint`);

/** Billing-period usage on PostgreSQL (D12, D32): SQLite's UsageStore, as one statement. */
export class PostgresUsageStore implements StoreArea<UsageStore> {
  constructor(private readonly pool: PostgresPool) {}

  async snapshot({ userId, nowMs, sync, async }: UsageQuery): Promise<UsageSnapshot> {
    const { rows } = await this.pool.query<Record<string, number>>(
      snapshot({
        userId,
        now: nowMs,
        syncKey: sync.key,
        asyncKey: async.key,
        ...bucketParams("sync", sync.shape),
        ...bucketParams("async", async.shape),
      }),
    );
    const row = rows[0] as Record<string, number>;
    return {
      periodCost: row.periodCost as number,
      sync: bucketRowOf(row, "sync"),
      async: bucketRowOf(row, "async"),
    };
  }
}
