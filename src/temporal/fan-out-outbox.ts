import type { Client } from "@temporalio/client";
import { logger } from "../logging/logger.js";
import type { FanOutIntent } from "../store/outbox-store.js";
import type { Store } from "../store/store.js";
import type { DeliveryTarget } from "./delivery-ids.js";
import { startFanOut } from "./start-fan-out.js";

export interface FanOutOutboxOptions {
  /** How long a claimed intent is held before another process may take it (a start takes milliseconds). */
  leaseMs: number;
  /** Starts in flight at once. */
  concurrency: number;
  /** How long a failed start waits before the next try. */
  retryMs: number;
  /**
   * The longest the dispatcher sleeps without a wake: another process's intents, left when it died
   * before claiming them, are found within this.
   */
  idleMs: number;
}

const defaults: FanOutOutboxOptions = { leaseMs: 30_000, concurrency: 32, retryMs: 5_000, idleMs: 5_000 };

/** Makes (or finds, when run again) the deliveries of one log entry: the fan-out activities' own. */
export type PrepareDeliveries = (logId: string) => Promise<DeliveryTarget[]>;

/**
 * Starts the notification fan-outs that log writes leave in the outbox (issue 12, D19). The log-writing
 * activity only records the intent with its entry and wakes this dispatcher, so an execution completes
 * without waiting for the start. The dispatcher makes the entry's deliveries itself, since it has the
 * store, and starts the workflow with them as its input and search attributes on the worker's own
 * connection (eager start): the fan-out's first task schedules the delivery activities at once, and an
 * entry with nothing to deliver (an alert rule that did not fire) costs no workflow at all. The intent
 * is removed once the server has the workflow; a failed step is retried later. Intents left by a
 * process that died are claimed again when their lease ends, so none is lost; making the deliveries
 * again finds the same rows, and a start that runs twice is refused by the workflow id (start-fan-out.ts).
 */
export class FanOutOutbox {
  private readonly options: FanOutOutboxOptions;
  private readonly inFlight = new Set<Promise<void>>();
  private wakeUp: (() => void) | undefined;
  private woken = false;

  constructor(
    private readonly store: Store,
    private readonly client: Client,
    private readonly prepare: PrepareDeliveries,
    options: Partial<FanOutOutboxOptions> = {},
  ) {
    this.options = { ...defaults, ...options };
  }

  /** A log write has just left an intent: look now rather than at the next idle timeout. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Dispatches until `signal` aborts, then waits for the starts in flight. */
  async run(signal: AbortSignal): Promise<void> {
    // The stop is a wake that lasts: one that comes while the store answers (there is no pause to end
    // yet) still ends the sleep that follows, and a pause after a refused claim does not begin.
    const onAbort = () => this.wake();
    signal.addEventListener("abort", onAbort);
    try {
      while (!signal.aborted) {
        this.woken = false;
        const free = this.options.concurrency - this.inFlight.size;
        const due = free > 0 ? await this.claim(free) : [];
        if (due === undefined) {
          if (!signal.aborted) await this.pause(this.options.retryMs);
          continue;
        }
        for (const intent of due) this.track(this.start(intent));
        if (due.length === free && free > 0) continue;
        await this.sleep();
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      await Promise.allSettled(this.inFlight);
    }
  }

  /** Undefined when the store refused: the intents stay, and the dispatcher tries again after a pause. */
  private async claim(limit: number): Promise<FanOutIntent[] | undefined> {
    try {
      return await this.store.outbox.claim(Date.now(), this.options.leaseMs, limit);
    } catch (error) {
      logger.warn({ err: error }, "notification outbox: could not claim fan-outs to start");
      return undefined;
    }
  }

  private async start(intent: FanOutIntent): Promise<void> {
    try {
      const targets = await this.prepare(intent.logId);
      // The intent's trace context (D50) goes with it, into the fan-out's input.
      if (targets.length > 0) await startFanOut(this.client, { ...intent, targets });
      await this.store.outbox.remove(intent.logId);
    } catch (error) {
      logger.warn(
        { err: error, logId: intent.logId },
        `notification outbox: the notifications of ${intent.logId} did not start; trying again`,
      );
      await this.store.outbox.postpone(intent.logId, Date.now() + this.options.retryMs);
    }
  }

  private track(start: Promise<void>): void {
    const tracked = start
      .catch(() => {})
      .finally(() => {
        this.inFlight.delete(tracked);
        this.wakeUp?.();
      });
    this.inFlight.add(tracked);
  }

  private async nextDue(): Promise<number | undefined> {
    try {
      return await this.store.outbox.nextDue();
    } catch {
      return undefined;
    }
  }

  /**
   * Until a wake, a finished start or the earliest intent's time. Meanwhile it looks at the store every
   * `idleMs`, for intents another process wrote, with a read: a look that finds none due costs no claim,
   * which is a write (a worker with the deliveries role alone looks every 50 ms, worker.ts).
   */
  private async sleep(): Promise<void> {
    for (;;) {
      if (this.woken) return;
      const next = this.inFlight.size < this.options.concurrency ? await this.nextDue() : undefined;
      // A wake that came while the store answered must not wait for the timeout.
      if (this.woken) return;
      const untilDue = (next ?? Number.POSITIVE_INFINITY) - Date.now();
      if (untilDue <= 0) return;
      const woken = await this.pause(Math.min(this.options.idleMs, untilDue));
      if (woken || untilDue <= this.options.idleMs) return;
    }
  }

  /** Waits `ms`, or less when woken (a wake, a finished start, the stop): then it answers true. */
  private async pause(ms: number): Promise<boolean> {
    let woken = false;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        woken = true;
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeUp = undefined;
    return woken;
  }
}
