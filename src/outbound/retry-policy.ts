/**
 * When an outbound request is worth another attempt, and how long to wait first: the one classification
 * the HTTP and agent blocks (D16) and the webhook and chat channels (D19, D20) share.
 */

/** 429 and 5xx say "not now"; every other answer would be the same answer again. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * Exponential backoff with full jitter (D16), so many executions hitting one struggling API spread out,
 * and a server's Retry-After honoured over it.
 */
export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/** The wait before retry number `retry` (0 for the first); Retry-After wins, up to the cap. */
export function retryDelay(
  retry: number,
  retryAfterMs: number | undefined,
  backoff: Backoff,
  random: () => number,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, backoff.maxMs);
  return Math.floor(random() * Math.min(backoff.maxMs, backoff.baseMs * 2 ** retry));
}

/** Retry-After is whole seconds or an HTTP-date, and every HTTP-date form starts with a day name. */
export function retryAfterMs(value: string | null, nowMs = Date.now()): number | undefined {
  const text = value?.trim() ?? "";
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = /^[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
