import type { BucketShape } from "../limits/plans.js";
import { type BucketRow, type BucketState, bucketState, type TakeResult } from "../limits/token-bucket.js";
import { type Db, writtenRow } from "./database.js";
import { GroupCommit } from "./group-commit.js";

/** The named parameters that `peekBucketSql(_, name)` and the take read, for one bucket shape. */
export function bucketParams(name: string, shape: BucketShape): Record<string, number> {
  return { [`${name}Rpm`]: shape.requestsPerMinute, [`${name}Burst`]: shape.maxBurst };
}

/**
 * Tokens in the stored bucket `alias` at @now: refilled continuously since its last update and capped
 * at the burst (D11). A clock behind the one that last wrote the bucket refills nothing rather than
 * draining it. Rounded to 1e-9 so that refills that add up to a whole token (6 s at 10/min, in any
 * number of steps) count as whole despite binary fractions.
 */
function refilledTokensSql(alias: string, name: string): string {
  return (
    `round(min(@${name}Burst, ${alias}.tokens + ` +
    `max(0, @now - ${alias}.updated_at) * @${name}Rpm / 60000.0), 9)`
  );
}

/**
 * Selects `<name>Tokens` and `<name>AsOf` of the bucket joined as `alias` without changing it; a bucket
 * never taken from is full (D11). Shared by every read of bucket state, so it is computed one way only.
 */
export function peekBucketSql(alias: string, name: string): string {
  return (
    `coalesce(${refilledTokensSql(alias, name)}, @${name}Burst) AS ${name}Tokens, ` +
    `coalesce(max(${alias}.updated_at, @now), @now) AS ${name}AsOf`
  );
}

/** The row's columns selected by `peekBucketSql(_, name)`, as a BucketRow. */
export function bucketRowOf(row: Record<string, number>, name: string): BucketRow {
  return { tokens: row[`${name}Tokens`] as number, asOf: row[`${name}AsOf`] as number };
}

/**
 * Refill and take in one UPSERT, so that concurrent requests in any number of processes sharing the
 * file (D11) each see the bucket as the previous one left it: SQLite holds the write lock for the whole
 * statement, and no value makes a round trip through JavaScript between the read and the write.
 * updated_at never moves backwards, so a lagging clock cannot re-earn tokens already counted.
 */
const refilled = refilledTokensSql("b", "bucket");
const takeSql = `
  INSERT INTO rate_limit_buckets AS b (key, tokens, updated_at, last_allowed)
  VALUES (@key, max(@bucketBurst - 1, 0), @now, @bucketBurst >= 1)
  ON CONFLICT (key) DO UPDATE SET
    tokens = ${refilled} - (${refilled} >= 1),
    updated_at = max(b.updated_at, @now),
    last_allowed = ${refilled} >= 1
  RETURNING tokens, updated_at AS asOf, last_allowed AS allowed`;

const peekSql = `
  SELECT ${peekBucketSql("b", "bucket")}
  FROM (SELECT 1) LEFT JOIN rate_limit_buckets b ON b.key = @key`;

/**
 * Token buckets held in SQLite, shared by every process on the machine and kept across restarts (D11,
 * D12). The API's are in the state file (`state`, state-database.ts), committed without an fsync (D23 as
 * amended names the API's token buckets) and in groups: the takes asked for in one turn of the event loop
 * share one transaction (group-commit.ts). The execution buckets stay in the store's file at FULL: each
 * take commits on its own, before the execution starts, and the limits object reads them in one
 * statement with the month's usage (usage-store.ts).
 */
export class RateLimitStore {
  private readonly durable;
  private readonly state;

  private readonly stateCommits;

  constructor(db: Db, state: Db) {
    this.durable = { take: db.prepare(takeSql), peek: db.prepare(peekSql) };
    this.state = { take: state.prepare(takeSql), peek: state.prepare(peekSql) };
    this.stateCommits = new GroupCommit(state);
  }

  /**
   * Takes one whole token from the bucket when at least one is available. `durable: false` is for the
   * API's buckets, in the state file: a power cut can only refill one a little.
   */
  async take(key: string, shape: BucketShape, nowMs: number, durable = true): Promise<TakeResult> {
    const params = { key, now: nowMs, ...bucketParams("bucket", shape) };
    type Taken = BucketRow & { allowed: number };
    // The API's takes, one per request, commit in groups (group-commit.ts); an execution's commits alone.
    const row = durable
      ? writtenRow<Taken>(this.durable.take, params)
      : await this.stateCommits.run(() => writtenRow<Taken>(this.state.take, params));
    // The UPSERT always answers its one row.
    if (!row) throw new Error("the take answered no row");
    const state = bucketState(row, shape, nowMs);
    if (row.allowed) return { allowed: true, ...state };
    return { allowed: false, ...state, retryAfterSeconds: Math.ceil((state.resetAtMs - nowMs) / 1000) };
  }

  /** The bucket as a take at `nowMs` would find it, without taking; `durable` as for `take`. */
  async peek(key: string, shape: BucketShape, nowMs: number, durable = true): Promise<BucketState> {
    const params = { key, now: nowMs, ...bucketParams("bucket", shape) };
    const row = this.statements(durable).peek.get(params) as Record<string, number>;
    return bucketState(bucketRowOf(row, "bucket"), shape, nowMs);
  }

  private statements(durable: boolean) {
    return durable ? this.durable : this.state;
  }
}
