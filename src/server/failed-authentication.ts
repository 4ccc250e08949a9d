import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Throttles guessing (D26): each client address may fail authentication `perMinute` times a minute, a
 * token bucket refilled continuously. While its bucket is empty, every request of that address that would
 * authenticate is refused with 429 before its credentials are looked at, so a guesser learns nothing more.
 * Held in memory per process: a restart forgets, which only gives a guesser one more minute's worth.
 *
 * A credential's check can take a while (a key looked up in PostgreSQL, a webhook token checked by its
 * service after the body), so counting failures as they end would let every attempt already in flight
 * through: 500 concurrent guesses would all be looked at. Each attempt in flight therefore holds one of
 * the address's failures left; while all of them are held, the address's next attempt waits for one to
 * end (a success gives its failure back, a failure spends it) and is refused once none is left. So a
 * burst of guesses gets no more verdicts than the address had failures left, and a client that fails
 * nothing is only ever made to wait when it has more than `perMinute` authentications in flight at once.
 */
export interface FailedAuthenticationThrottle {
  /**
   * An attempt to authenticate from the address, once one of its failures left is free for it; or the 429
   * when the address has none left. The attempt must be ended, as a failure or not.
   */
  attempt(
    address: string,
  ): AuthenticationAttempt | ConnectError | Promise<AuthenticationAttempt | ConnectError>;
  /** The 429 for an address that has no failure left, else undefined; takes no attempt. */
  refusal(address: string): ConnectError | undefined;
  /** Counts one failed authentication of the address that no attempt covered. */
  record(address: string): void;
}

/** The 429 of an address with no failed authentication left (D26). */
export class TooManyFailedAuthentications extends ConnectError {
  /** ConnectError's own instanceof test accepts any ConnectError; this class means only its own instances. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(TooManyFailedAuthentications, value);
  }
}

/** One authentication in flight. Ending it twice, or failing it after it ended, changes nothing. */
export interface AuthenticationAttempt {
  /** The credential was wrong: the address's failure is spent. */
  failed(): void;
  /** The attempt is over without a failure (a success, or a fault of ours): its failure is given back. */
  ended(): void;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** An address's attempts in flight, and the attempts waiting for one of them to end, first come first. */
interface InFlight {
  count: number;
  /** Made when the first attempt has to wait: most addresses never have one. */
  waiting: Array<(admission: AuthenticationAttempt | ConnectError) => void> | undefined;
}

/** Addresses tracked at once; beyond it the oldest are forgotten (a refilled bucket is no loss). */
const maxTrackedAddresses = 100_000;

export function createFailedAuthenticationThrottle(
  perMinute: number,
  clock: () => number = Date.now,
): FailedAuthenticationThrottle {
  return new Throttle(perMinute, clock);
}

class Throttle implements FailedAuthenticationThrottle {
  private readonly buckets = new Map<string, Bucket>();
  /** Only addresses with an attempt in flight or waiting: an entry goes when its last attempt ends. */
  private readonly inFlight = new Map<string, InFlight>();
  private readonly refillPerMs: number;

  constructor(
    private readonly perMinute: number,
    private readonly clock: () => number,
  ) {
    this.refillPerMs = perMinute / 60_000;
  }

  attempt(
    address: string,
  ): AuthenticationAttempt | ConnectError | Promise<AuthenticationAttempt | ConnectError> {
    const tokens = this.tokensOf(address, this.clock());
    if (tokens < 1) return this.tooMany(tokens);
    const entry = this.inFlight.get(address);
    if (!entry) {
      this.inFlight.set(address, { count: 1, waiting: undefined });
      return new Attempt(this, address);
    }
    if (!entry.waiting?.length && tokens - entry.count >= 1) {
      entry.count++;
      return new Attempt(this, address);
    }
    // Every failure left is held by an attempt in flight, so one of them ends before this one starts;
    // behind those already waiting, unless the bucket has refilled enough for them all meanwhile.
    return new Promise((resolve) => {
      entry.waiting ??= [];
      entry.waiting.push(resolve);
      this.admitWaiting(address, entry);
    });
  }

  refusal(address: string): ConnectError | undefined {
    const tokens = this.tokensOf(address, this.clock());
    return tokens < 1 ? this.tooMany(tokens) : undefined;
  }

  record(address: string): void {
    const now = this.clock();
    const tokens = this.tokensOf(address, now);
    this.buckets.delete(address);
    this.buckets.set(address, { tokens: Math.max(0, tokens - 1), at: now });
    if (this.buckets.size > maxTrackedAddresses) {
      const oldest = this.buckets.keys().next().value as string;
      this.buckets.delete(oldest);
    }
  }

  /** An attempt of the address has ended, failed or not. */
  end(address: string, failed: boolean): void {
    if (failed) this.record(address);
    const entry = this.inFlight.get(address) as InFlight;
    entry.count--;
    this.admitWaiting(address, entry);
  }

  /** The waiting attempts that the failures left make room for start; all are refused once none is left. */
  private admitWaiting(address: string, entry: InFlight): void {
    const waiting = entry.waiting;
    while (waiting && waiting.length > 0) {
      const tokens = this.tokensOf(address, this.clock());
      if (tokens < 1) {
        for (const waiter of waiting.splice(0)) waiter(this.tooMany(tokens));
        break;
      }
      if (tokens - entry.count < 1) break;
      const next = waiting.shift() as (admission: AuthenticationAttempt) => void;
      entry.count++;
      next(new Attempt(this, address));
    }
    if (entry.count === 0 && !waiting?.length) this.inFlight.delete(address);
  }

  private tokensOf(address: string, now: number): number {
    const bucket = this.buckets.get(address);
    return bucket
      ? Math.min(this.perMinute, bucket.tokens + Math.max(0, now - bucket.at) * this.refillPerMs)
      : this.perMinute;
  }

  private tooMany(tokens: number): ConnectError {
    const retryAfter = Math.max(1, Math.ceil((1 - tokens) / this.refillPerMs / 1000));
    return new TooManyFailedAuthentications(
      `too many failed authentications from this address: at most ${this.perMinute} a minute; retry after ${retryAfter} s`,
      Code.ResourceExhausted,
      new Headers({ "Retry-After": String(retryAfter) }),
    );
  }
}

class Attempt implements AuthenticationAttempt {
  private open = true;

  constructor(
    private readonly throttle: Throttle,
    private readonly address: string,
  ) {}

  failed(): void {
    this.end(true);
  }

  ended(): void {
    this.end(false);
  }

  private end(failed: boolean): void {
    if (!this.open) return;
    this.open = false;
    this.throttle.end(this.address, failed);
  }
}
