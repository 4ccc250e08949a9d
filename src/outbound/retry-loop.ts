import { setTimeout as delay } from "node:timers/promises";
import { type Backoff, retryDelay } from "./retry-policy.js";

/** One attempt as a block's trace span records it (D17). Times are Unix milliseconds. */
export interface AttemptRecord {
  attempt: number;
  startedAt: number;
  endedAt: number;
  durationMs: number;
  status: number | null;
  error: string | null;
  /** Wait before the next attempt, or null when this attempt was the last. */
  retryInMs: number | null;
}

/** What one attempt came to, and whether another one could change it. */
export interface Attempted<Result> {
  result: Result;
  status: number | null;
  error: string | null;
  retryable: boolean;
  /** The server's Retry-After, in ms. */
  retryAfterMs?: number | undefined;
}

export interface RetrySchedule extends Backoff {
  /** Attempts after the first. */
  retries: number;
}

export interface RetryLoopOptions {
  /** Cancels any wait between attempts; the loop then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** An activity's sleep, so a cancelled activity stops waiting; a timer by default. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** In [0, 1): the jitter of the backoff. */
  random?: (() => number) | undefined;
  /** Each attempt as it ends: the trace span's record, and a moment to heartbeat. */
  onAttempt?: ((attempt: AttemptRecord) => void) | undefined;
  /**
   * Stop where the loop would wait for another attempt and hand that wait back (`handedOff`), for another
   * process to go on with `resume`: the HTTP block's first attempt runs as a local activity (issue 12).
   */
  handOffRetries?: boolean | undefined;
  /** Go on from a loop handed off after `attemptsDone` attempts: wait `waitMs`, then the next attempt. */
  resume?: RetryResume | undefined;
}

/** Where a handed-off loop stands. */
export interface RetryResume {
  attemptsDone: number;
  waitMs: number;
}

export interface RetryLoopResult<Result> {
  /** The last attempt's result. */
  result: Result;
  /** The attempts this loop made, numbered after those a resumed loop was handed. */
  attempts: AttemptRecord[];
  /** Set when the loop stopped before a retry it was told to hand off. */
  handedOff?: RetryResume | undefined;
}

/**
 * The blocks' retry loop (D16, D13): `attempt` again while it is retryable and retries are left, waiting
 * by the schedule between attempts. Returns the last attempt's result and the record of every attempt.
 */
export async function withRetries<Result>(
  schedule: RetrySchedule,
  options: RetryLoopOptions,
  attempt: () => Promise<Attempted<Result>>,
): Promise<RetryLoopResult<Result>> {
  const random = options.random ?? Math.random;
  const before = options.resume?.attemptsDone ?? 0;
  const attempts: AttemptRecord[] = [];
  if (options.resume) await pause(options.resume.waitMs, options);
  for (;;) {
    options.signal?.throwIfAborted();
    const done = before + attempts.length;
    const startedAt = Date.now();
    const outcome = await attempt();
    const endedAt = Date.now();
    const retryInMs =
      outcome.retryable && done < schedule.retries
        ? retryDelay(done, outcome.retryAfterMs, schedule, random)
        : null;
    const record: AttemptRecord = {
      attempt: done + 1,
      startedAt,
      endedAt,
      durationMs: endedAt - startedAt,
      status: outcome.status,
      error: outcome.error,
      retryInMs,
    };
    attempts.push(record);
    options.onAttempt?.(record);
    if (retryInMs === null) return { result: outcome.result, attempts };
    if (options.handOffRetries)
      return { result: outcome.result, attempts, handedOff: { attemptsDone: done + 1, waitMs: retryInMs } };
    await pause(retryInMs, options);
  }
}

/** An injected sleep cannot see the signal, so cancellation is checked again once the wait ends. */
async function pause(ms: number, options: RetryLoopOptions): Promise<void> {
  const sleep = options.sleep ?? ((wait: number) => delay(wait, undefined, { signal: options.signal }));
  await sleep(ms).catch((error: unknown) => {
    options.signal?.throwIfAborted();
    throw error;
  });
  options.signal?.throwIfAborted();
}
