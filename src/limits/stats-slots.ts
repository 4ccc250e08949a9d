import { Code, ConnectError } from "@connectrpc/connect";
import { KeyedCount } from "./keyed-count.js";
import type { Quotas } from "./quotas.js";

/**
 * A refused call's Retry-After: a running stats call ends within its time limit, most within seconds, so
 * a client that waits this long usually finds a slot free.
 */
const retryAfterSeconds = 5;

/**
 * D46: the log stats, the heaviest read, run at most `statsPerUser` at once for one user and
 * `statsPerProcess` at once for the process, so one tenant's burst cannot take every thread or
 * connection the others' stats need. A call beyond either cap is refused at once with 429 and
 * Retry-After, never queued: a queue would make the others wait behind it all the same.
 */
export class StatsSlots {
  private readonly running = new KeyedCount();

  constructor(private readonly limits: Pick<Quotas["reads"], "statsPerUser" | "statsPerProcess">) {}

  /** Runs `read` in a slot of `userId`'s, or refuses it. */
  async run<T>(userId: string, read: () => Promise<T>): Promise<T> {
    if (this.running.of(userId) >= this.limits.statsPerUser) {
      throw refusal(`at most ${this.limits.statsPerUser} stats calls of one user run at once`);
    }
    if (this.running.total >= this.limits.statsPerProcess) {
      throw refusal(`at most ${this.limits.statsPerProcess} stats calls run at once on this server`);
    }
    return this.running.holding(userId, read);
  }
}

function refusal(limit: string): ConnectError {
  return new ConnectError(`${limit} (D46); retry after ${retryAfterSeconds} s`, Code.ResourceExhausted, {
    "Retry-After": String(retryAfterSeconds),
  });
}
