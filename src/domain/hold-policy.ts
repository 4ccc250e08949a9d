/**
 * D36: how long and how much a held endpoint keeps, and when its probe tries it. Pure: the hold watcher's
 * activities ask it, and tests check it directly.
 */
const minuteMs = 60_000;
const hourMs = 60 * minuteMs;

/** Where a webhook or chat subscription stands (D36); an e-mail one is always active. */
export const holdStates = ["active", "held", "draining"] as const;
export type HoldState = (typeof holdStates)[number];

/** How long and how many deliveries a hold keeps before the oldest end `failed` (hold_limit). */
export interface HoldBounds {
  maxDeliveries: number;
  maxAgeMs: number;
}

/** FLOWLOG_HOLD's figures: a count and whole hours. */
export interface HoldSettings {
  maxDeliveries: number;
  maxAgeHours: number;
}

/** D36: 10,000 held deliveries per subscription, 7 days. */
export const defaultHoldSettings: HoldSettings = { maxDeliveries: 10_000, maxAgeHours: 168 };

export function holdBoundsOf(settings: HoldSettings): HoldBounds {
  return { maxDeliveries: settings.maxDeliveries, maxAgeMs: settings.maxAgeHours * hourMs };
}

export const defaultHoldBounds = holdBoundsOf(defaultHoldSettings);

/** The probe's backoff: 1, 2, 4, 8, 16 minutes, then every 30 (D36). */
export const probeStepsMs = [1, 2, 4, 8, 16, 30].map((minutes) => minutes * minuteMs);
export const probeJitter = 0.1;

/**
 * The wait before probe number `probes` + 1 of a hold: its step plus up to 10 % jitter, times `scale` (the
 * delivery policy's delayScale, which tests shrink so an hour's outage passes in seconds).
 */
export function probeWaitMs(probes: number, scale = 1, random: () => number = Math.random): number {
  const step = probeStepsMs[Math.min(probes, probeStepsMs.length - 1)] as number;
  return Math.round(step * (1 + probeJitter * random()) * scale);
}
