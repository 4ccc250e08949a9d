import type { BucketShape } from "./plans.js";

/**
 * Token-bucket arithmetic (D11, D12), apart from how buckets are stored: the store refills and takes in
 * SQL (store/rate-limit-store.ts) and reads back a BucketRow; what a bucket shows callers is derived here.
 */

/** A bucket as of one instant. */
export interface BucketState {
  /** Whole tokens available. */
  remaining: number;
  /** When the next whole token arrives; the instant itself when the bucket is full. */
  resetAtMs: number;
}

export interface TakeResult extends BucketState {
  allowed: boolean;
  /** Whole seconds, rounded up, until a token is available; only when refused. */
  retryAfterSeconds?: number;
}

/** What a statement returns about one bucket: its exact tokens and the instant they are counted at. */
export interface BucketRow {
  tokens: number;
  asOf: number;
}

/**
 * Whole tokens and the time of the next whole one. Tokens are counted at `asOf`, which is later than
 * `nowMs` only when another process's clock is ahead; the next token is due from then.
 */
export function bucketState({ tokens, asOf }: BucketRow, shape: BucketShape, nowMs: number): BucketState {
  const remaining = Math.floor(tokens);
  if (tokens >= shape.maxBurst) return { remaining, resetAtMs: nowMs };
  const msToNextToken = ((remaining + 1 - tokens) * 60_000) / shape.requestsPerMinute;
  return { remaining, resetAtMs: asOf + Math.ceil(msToNextToken) };
}
