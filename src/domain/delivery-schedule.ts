/**
 * When a notification is sent again (D19, spec "Other constants"): 5 attempts in all, the first at once,
 * then after 5 s, 15 s, 1 min and 3 min, each plus up to 10 % jitter. The 10 min step is used only when
 * the operator raises the limit to 6 attempts, and also caps an honoured Retry-After. Pure: the delivery
 * activity asks it for the delay it hands Temporal as `nextRetryDelay`, and tests check it directly.
 */
export const retryDelaysMs = [5_000, 15_000, 60_000, 180_000, 600_000] as const;
export const retryJitter = 0.1;
export const retryAfterCapMs = 600_000;
export const defaultMaxAttempts = 5;
/** One attempt more than there are delays: the limit an operator may raise the attempts to. */
export const maxAttemptsCeiling = retryDelaysMs.length + 1;

/** What an operator (or a test) may change about the schedule; the delays themselves stay D19's. */
export interface DeliveryPolicy {
  /** 5 by default, 6 at most (D19). */
  maxAttempts: number;
  /**
   * Multiplies every delay: 1 in production; tests pass 0.001 so the 5 s : 15 s spacing of a 500, 500,
   * 200 receiver shows in milliseconds with the same ratio.
   */
  delayScale: number;
}

export const defaultDeliveryPolicy: DeliveryPolicy = { maxAttempts: defaultMaxAttempts, delayScale: 1 };

export function deliveryPolicy(overrides: Partial<DeliveryPolicy> = {}): DeliveryPolicy {
  const policy = { ...defaultDeliveryPolicy, ...overrides };
  if (
    !Number.isInteger(policy.maxAttempts) ||
    policy.maxAttempts < 1 ||
    policy.maxAttempts > maxAttemptsCeiling
  )
    throw new RangeError(`delivery maxAttempts must be an integer from 1 to ${maxAttemptsCeiling}`);
  if (!(policy.delayScale > 0)) throw new RangeError("delivery delayScale must be a positive number");
  return policy;
}

export interface RetryDelayOptions {
  /** A Retry-After the receiver sent with its 429 or 503, in ms; honoured up to retryAfterCapMs. */
  retryAfterMs?: number | undefined;
  /** [0, 1); Math.random by default, fixed in tests. */
  random?: () => number;
  scale?: number;
}

/**
 * The wait after failed attempt `attempt` (1-based) before the next one: the scheduled step plus up to
 * 10 % jitter, or the receiver's Retry-After when that is longer, never beyond 10 min (D19).
 */
export function retryDelayMs(attempt: number, options: RetryDelayOptions = {}): number {
  const { retryAfterMs, random = Math.random, scale = 1 } = options;
  const step = retryDelaysMs[Math.min(attempt, retryDelaysMs.length) - 1] ?? retryDelaysMs[0];
  const jittered = step * (1 + retryJitter * random());
  const asked = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, retryAfterCapMs);
  return Math.round(Math.max(jittered, asked) * scale);
}
