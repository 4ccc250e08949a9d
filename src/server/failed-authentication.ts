import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Throttles guessing (D26): each client address may fail authentication `perMinute` times a minute, a
 * token bucket refilled continuously. While its bucket is empty, every request of that address that would
 * authenticate is refused with 429 before its credentials are looked at, so a guesser learns nothing more.
 * Held in memory per process: a restart forgets, which only gives a guesser one more minute's worth.
 */
export interface FailedAuthenticationThrottle {
  /** The 429 for an address that has used up its failures, else undefined. */
  refusal(address: string): ConnectError | undefined;
  /** Counts one failed authentication of the address. */
  record(address: string): void;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Addresses tracked at once; beyond it the oldest are forgotten (a refilled bucket is no loss). */
const maxTrackedAddresses = 100_000;

export function createFailedAuthenticationThrottle(
  perMinute: number,
  clock: () => number = Date.now,
): FailedAuthenticationThrottle {
  const buckets = new Map<string, Bucket>();
  const refillPerMs = perMinute / 60_000;
  const tokensOf = (bucket: Bucket | undefined, now: number) =>
    bucket ? Math.min(perMinute, bucket.tokens + Math.max(0, now - bucket.at) * refillPerMs) : perMinute;

  return {
    refusal(address) {
      const now = clock();
      const tokens = tokensOf(buckets.get(address), now);
      if (tokens >= 1) return undefined;
      const retryAfter = Math.max(1, Math.ceil((1 - tokens) / refillPerMs / 1000));
      return new ConnectError(
        `too many failed authentications from this address: at most ${perMinute} a minute; retry after ${retryAfter} s`,
        Code.ResourceExhausted,
        new Headers({ "Retry-After": String(retryAfter) }),
      );
    },
    record(address) {
      const now = clock();
      const tokens = tokensOf(buckets.get(address), now);
      buckets.delete(address);
      buckets.set(address, { tokens: Math.max(0, tokens - 1), at: now });
      if (buckets.size > maxTrackedAddresses) {
        const oldest = buckets.keys().next().value as string;
        buckets.delete(oldest);
      }
    },
  };
}
