import type { BucketShape } from "../../limits/plans.js";
import { type BucketRow, type BucketState, bucketState, type TakeResult } from "../../limits/token-bucket.js";
import type { RateLimitStore } from "../rate-limit-store.js";
import { bucketParams } from "../rate-limit-store.js";
import type { StoreArea } from "../store.js";
import type { PostgresPool } from "./database.js";
import { namedStatement } from "./named-parameters.js";

/**
 * SQLite's refill (rate-limit-store.ts) in PostgreSQL's words: tokens in bucket `alias` at @now,
 * refilled since its last update, capped at the burst, never drained by a clock behind the last writer's,
 * and rounded to 1e-9 so that refills adding up to a whole token count as whole (D11).
 */
function refilledTokensSql(alias: string, name: string): string {
  return (
    `round(least(@${name}Burst::float8, ${alias}.tokens + ` +
    `greatest(0, @now::bigint - ${alias}.updated_at) * @${name}Rpm::float8 / 60000)::numeric, 9)::float8`
  );
}

/** Selects `<name>Tokens` and `<name>AsOf` of the bucket joined as `alias`; a bucket never taken from is full. */
export function peekBucketSql(alias: string, name: string): string {
  return (
    `coalesce(${refilledTokensSql(alias, name)}, @${name}Burst::float8) AS "${name}Tokens", ` +
    `greatest(${alias}.updated_at, @now::bigint) AS "${name}AsOf"`
  );
}

/**
 * Refill and take in one UPSERT, as on SQLite: the row lock the conflict takes makes concurrent takes on
 * every machine see the bucket as the previous one left it, and no value makes a round trip through
 * JavaScript between the read and the write. updated_at never moves backwards.
 */
const refilled = refilledTokensSql("b", "bucket");
const take = namedStatement(`
  INSERT INTO rate_limit_buckets AS b (key, tokens, updated_at, last_allowed)
  VALUES (@key, greatest(@bucketBurst::float8 - 1, 0), @now::bigint,
    CASE WHEN @bucketBurst::float8 >= 1 THEN 1 ELSE 0 END)
  ON CONFLICT (key) DO UPDATE SET
    tokens = ${refilled} - CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
    updated_at = greatest(b.updated_at, @now::bigint),
    last_allowed = CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END
  RETURNING tokens, updated_at AS "asOf", last_allowed AS allowed`);

const peek = namedStatement(`
  SELECT ${peekBucketSql("b", "bucket")}
  FROM (SELECT 1) AS one LEFT JOIN rate_limit_buckets b ON b.key = @key`);

/**
 * Token buckets on PostgreSQL (D11, D12, D32): one bucket per key for every machine of a deployment, so
 * a plan's limit holds however many API servers share the load.
 */
export class PostgresRateLimitStore implements StoreArea<RateLimitStore> {
  constructor(private readonly pool: PostgresPool) {}

  /**
   * Takes one whole token when at least one is available. Every take is committed durably: SQLite's
   * fsync-free commit for the API's buckets (D23) has no one-statement equivalent here, and a commit
   * costs PostgreSQL a WAL flush shared by the commits that wait with it. So the store's `durable`
   * argument is not taken.
   */
  async take(key: string, shape: BucketShape, nowMs: number): Promise<TakeResult> {
    const { rows } = await this.pool.query<BucketRow & { allowed: number }>(
      take({ key, now: nowMs, ...bucketParams("bucket", shape) }),
    );
    const row = rows[0] as BucketRow & { allowed: number };
    const state = bucketState(row, shape, nowMs);
    if (row.allowed) return { allowed: true, ...state };
    return { allowed: false, ...state, retryAfterSeconds: Math.ceil((state.resetAtMs - nowMs) / 1000) };
  }

  async peek(key: string, shape: BucketShape, nowMs: number): Promise<BucketState> {
    const { rows } = await this.pool.query<Record<string, number>>(
      peek({ key, now: nowMs, ...bucketParams("bucket", shape) }),
    );
    const row = rows[0] as Record<string, number>;
    return bucketState({ tokens: row.bucketTokens as number, asOf: row.bucketAsOf as number }, shape, nowMs);
  }
}
