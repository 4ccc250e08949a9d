/**
 * D35: a webhook or chat endpoint whose every delivery has failed for 5 days, at least 20 of them, is
 * disabled, and its owners are told 24 h before. Pure: the endpoint-health watcher asks it what is due,
 * from the run the delivery outcomes keep, and tests check it directly.
 */
const hourMs = 3_600_000;

export interface AutoDisablePolicy {
  /** How long every delivery must have failed: 5 days (FLOWLOG_AUTO_DISABLE.failingHours). */
  failingForMs: number;
  /** How long before the disable the notice goes out, and how long at least it precedes it: 24 h. */
  noticeMs: number;
  /** How many deliveries must have failed in the run: 20. */
  minFailures: number;
}

/** FLOWLOG_AUTO_DISABLE's figures: whole hours and a count. */
export interface AutoDisableSettings {
  failingHours: number;
  noticeHours: number;
  minFailures: number;
}

/** D35: 5 days, a notice 24 h before, 20 failed deliveries. */
export const defaultAutoDisableSettings: AutoDisableSettings = {
  failingHours: 120,
  noticeHours: 24,
  minFailures: 20,
};

/** The settings as the policy the watcher applies. */
export function autoDisablePolicyOf(settings: AutoDisableSettings): AutoDisablePolicy {
  return {
    failingForMs: settings.failingHours * hourMs,
    noticeMs: settings.noticeHours * hourMs,
    minFailures: settings.minFailures,
  };
}

export const defaultAutoDisablePolicy = autoDisablePolicyOf(defaultAutoDisableSettings);

/** The run of failed deliveries a subscription is in: since when, how many, and when it was noticed. */
export interface FailureRun {
  failingSince: number;
  failedDeliveries: number;
  /** When the advance notice went out; null before. */
  noticedAt: number | null;
}

/** What is due now: the notice, the disable, or nothing until `until` (null: until another failure). */
export type AutoDisableStep =
  | { kind: "notice" }
  | { kind: "disable" }
  | { kind: "wait"; until: number | null };

/**
 * The notice is due once the run is one notice period short of the limit with enough failures counted;
 * if the count is reached only later, the notice goes then. The disable is due at the limit, but never
 * sooner than a full notice period after the notice: an owner always has the promised 24 h to act.
 */
export function nextAutoDisableStep(
  run: FailureRun,
  policy: AutoDisablePolicy,
  now: number,
): AutoDisableStep {
  if (run.noticedAt === null) {
    const noticeDue = run.failingSince + policy.failingForMs - policy.noticeMs;
    if (now < noticeDue) return { kind: "wait", until: noticeDue };
    return run.failedDeliveries >= policy.minFailures ? { kind: "notice" } : { kind: "wait", until: null };
  }
  const disableDue = Math.max(run.failingSince + policy.failingForMs, run.noticedAt + policy.noticeMs);
  return now < disableDue ? { kind: "wait", until: disableDue } : { kind: "disable" };
}
