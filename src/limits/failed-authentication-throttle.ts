import { Code, ConnectError } from "@connectrpc/connect";
import ipaddr from "ipaddr.js";

/**
 * Throttles guessing (D26): each client address may fail authentication `perMinute` times a minute, a
 * token bucket refilled continuously; an IPv6 client counts by its /64 (throttleKeyOf). While its bucket
 * is empty, every request of that address that would authenticate is refused with 429 before its
 * credentials are looked at, so a guesser learns nothing more.
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

/**
 * What one bucket counts (D26 "per client address"): an IPv4 address, IPv4-mapped IPv6 included
 * (`::ffff:203.0.113.7` is 203.0.113.7), or an IPv6 address's /64. A /64 is the smallest network an IPv6
 * host is given (one LAN, one customer), and a host picks addresses in it at will (privacy extensions, or
 * all 2^64 of a routed prefix): counted one by one, a guesser would rotate past the throttle.
 */
function throttleKeyOf(address: string): string {
  // Most peers are IPv4 (dotted, no colon): their key is the address as it stands, with no parsing.
  if (!address.includes(":") || !ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === "ipv4") return ip.toString();
  const network = (ip as ipaddr.IPv6).parts.slice(0, 4).concat([0, 0, 0, 0]);
  return `${new ipaddr.IPv6(network).toString()}/64`;
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
    client: string,
  ): AuthenticationAttempt | ConnectError | Promise<AuthenticationAttempt | ConnectError> {
    const key = throttleKeyOf(client);
    const tokens = this.tokensOf(key, this.clock());
    if (tokens < 1) return this.tooMany(tokens);
    const entry = this.inFlight.get(key);
    if (!entry) {
      this.inFlight.set(key, { count: 1, waiting: undefined });
      return new Attempt(this, key);
    }
    if (!entry.waiting?.length && tokens - entry.count >= 1) {
      entry.count++;
      return new Attempt(this, key);
    }
    // Every failure left is held by an attempt in flight, so one of them ends before this one starts;
    // behind those already waiting, unless the bucket has refilled enough for them all meanwhile.
    return new Promise((resolve) => {
      entry.waiting ??= [];
      entry.waiting.push(resolve);
      this.admitWaiting(key, entry);
    });
  }

  refusal(client: string): ConnectError | undefined {
    const tokens = this.tokensOf(throttleKeyOf(client), this.clock());
    return tokens < 1 ? this.tooMany(tokens) : undefined;
  }

  record(client: string): void {
    this.spend(throttleKeyOf(client));
  }

  /** Takes one failure from the key's bucket. */
  private spend(key: string): void {
    const now = this.clock();
    const tokens = this.tokensOf(key, now);
    this.buckets.delete(key);
    this.buckets.set(key, { tokens: Math.max(0, tokens - 1), at: now });
    if (this.buckets.size > maxTrackedAddresses) {
      const oldest = this.buckets.keys().next().value as string;
      this.buckets.delete(oldest);
    }
  }

  /** An attempt of the throttle key has ended, failed or not. */
  end(key: string, failed: boolean): void {
    if (failed) this.spend(key);
    const entry = this.inFlight.get(key) as InFlight;
    entry.count--;
    this.admitWaiting(key, entry);
  }

  /** The waiting attempts that the failures left make room for start; all are refused once none is left. */
  private admitWaiting(key: string, entry: InFlight): void {
    const waiting = entry.waiting;
    while (waiting && waiting.length > 0) {
      const tokens = this.tokensOf(key, this.clock());
      if (tokens < 1) {
        for (const waiter of waiting.splice(0)) waiter(this.tooMany(tokens));
        break;
      }
      if (tokens - entry.count < 1) break;
      const next = waiting.shift() as (admission: AuthenticationAttempt) => void;
      entry.count++;
      next(new Attempt(this, key));
    }
    if (entry.count === 0 && !waiting?.length) this.inFlight.delete(key);
  }

  private tokensOf(key: string, now: number): number {
    const bucket = this.buckets.get(key);
    return bucket
      ? Math.min(this.perMinute, bucket.tokens + Math.max(0, now - bucket.at) * this.refillPerMs)
      : this.perMinute;
  }

  private tooMany(tokens: number): ConnectError {
    const retryAfter = Math.max(1, Math.ceil((1 - tokens) / this.refillPerMs / 1000));
    return new TooManyFailedAuthentications(
      `too many failed authentications from this address (for IPv6, from its /64 network): at most ${this.perMinute} a minute; retry after ${retryAfter} s`,
      Code.ResourceExhausted,
      new Headers({ "Retry-After": String(retryAfter) }),
    );
  }
}

class Attempt implements AuthenticationAttempt {
  private open = true;

  constructor(
    private readonly throttle: Throttle,
    private readonly key: string,
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
    this.throttle.end(this.key, failed);
  }
}
