/**
 * The retry timing shared by the blocks that call out (D16): exponential backoff with full jitter, so
 * many executions hitting one struggling API spread out, and a server's Retry-After honoured over it.
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

/** undici wraps socket errors in "fetch failed"; the innermost cause says what happened. */
export function innermostMessage(error: unknown): string {
  let cause = error;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  if (!(cause instanceof Error)) return String(cause);
  return cause.message || (cause as NodeJS.ErrnoException).code || cause.name;
}
