import type { Level, LogEntryRecord, Trigger } from "../store/records.js";
import { isoFromMs } from "../util/time.js";

/**
 * The alert rules of D21, one entry each: the rule's name (its key), what it fires on and when a firing is
 * over in docs/notifications.md's words (X is `threshold`, Y is `windowHours`), the fields it takes with
 * their units and ranges, its check and its resolution (D34), and the judging of a subscription's rule on
 * one execution (evaluateAlertRule, evaluateAlertResolution).
 * Validation (services/notifications/subscription-settings.ts), storage (the rule name a subscription
 * keeps), evaluation (here on executions, the no-activity watcher by time) and docs/notifications.md's rule
 * table (held to this one by test/readme-alert-rules.test.ts) all read it: a new rule is a new entry here.
 */

/** A subscription's rule, as it is stored and judged. */
export interface AlertRuleRecord {
  rule: AlertRuleName;
  /** X of the rule (D21). */
  threshold: number;
  /** Y of the rule, in hours; null for the rules without a window. */
  windowHours: number | null;
}

/** A rule that fired on an execution: what `data.alert` reports besides `firedAt` (D21). */
export interface FiredAlert {
  rule: AlertRuleName;
  /** A human sentence: the e-mail subject and the chat message show it (D20). */
  reason: string;
  /** X of the rule. */
  threshold: number;
  /** What the rule measured, in the unit of its threshold. */
  observed: number;
  windowHours: number | null;
}

/** Which of a workflow's executions a rule sees (D21): the subscription's trigger filter, empty = all. */
export interface ExecutionScope {
  workflowId: string;
  triggers: readonly Trigger[];
}

/** A time window of a workflow's executions by start time, both ends included. */
export interface WindowQuery extends ExecutionScope {
  fromStartedAt: number;
  untilStartedAt: number;
  /** A log entry left out of the window: the tripping one, when a rule compares it with the others. */
  excludeLogId?: string;
}

export interface WindowStats {
  executions: number;
  errors: number;
  /** null when the window is empty. */
  averageDurationMs: number | null;
}

/** What the execution-driven checks read, one workflow's recent executions: the store's alerts area. */
export interface ExecutionHistory {
  lastLevels(scope: ExecutionScope, untilStartedAt: number, limit: number): Promise<Level[]>;
  windowStats(query: WindowQuery): Promise<WindowStats>;
  firstStartedAt(workflowId: string): Promise<number | undefined>;
}

/** A bound on a rule's number, checked when a subscription is saved. */
export interface NumberRange {
  min?: number;
  above?: number;
  max?: number;
  integer?: boolean;
}

/** One number a rule takes. */
interface RuleField {
  /** The unit, as docs/notifications.md's rule table names it. */
  unit: string;
  /** The unit in an error message: "alertRule.threshold of failure_rate is a percentage: ...". */
  described: string;
  range: NumberRange;
}

/** What a check sees when a workflow's execution completes (D21). */
interface ExecutionCheck {
  /** X of the rule. */
  threshold: number;
  /** Y of the rule, in hours; validation on save guarantees it for the rules that take one. */
  windowHours: number | null;
  entry: LogEntryRecord;
  /** The workflow's executions that pass the subscription's trigger filter. */
  scope: ExecutionScope;
  history: ExecutionHistory;
  /** D21 "now": the tripping execution's end, so a replayed evaluation sees the same window. */
  now: number;
}

/** What a check reports when its rule fires: the measure, in the unit of X, and a human sentence (D20). */
interface Firing {
  observed: number;
  reason: string;
}

/** What a rule reports when it no longer holds (D34): the measure now, in the unit of X, and why. */
type Resolution = Firing;

interface RuleCommon {
  /** When the rule fires, in docs/notifications.md's words. */
  firesWhen: string;
  /** When a firing of the rule is over, in docs/notifications.md's words (D34). */
  resolvesWhen: string;
  threshold: RuleField;
  /** null for the rules that take no window (a given one is refused). */
  windowHours: RuleField | null;
  /**
   * D34: judged on each completed execution while the rule is firing for the workflow, timer rules too
   * (an execution is what ends a silence); null while the rule still holds.
   */
  resolve(input: ExecutionCheck): Promise<Resolution | null>;
}

/**
 * Judged on each completed execution. Each check sees only executions started no later than the tripping
 * one, so its answer does not depend on when the fan-out runs. The error-driven rules (failure_rate,
 * error_count) trip only on an error: a success cannot be the execution that tripped them.
 */
interface ExecutionRule extends RuleCommon {
  judged: "on-execution";
  check(input: ExecutionCheck): Promise<Firing | null>;
}

/** Judged by a durable Temporal timer, not on execution (D21): there is no execution to look at. */
interface TimerRule extends RuleCommon {
  judged: "by-timer";
  /**
   * When the silence that fires the rule is complete, counted from the last activity; `hourMs` is the
   * length of an hour, which tests shrink.
   */
  silentUntil(lastActivityAt: number, threshold: number, hourMs: number): number;
  /** The human sentence of the alert (D20), from the silence observed, in the unit of X. */
  reason(input: {
    workflowName: string;
    observed: number;
    threshold: number;
    lastActivityAt: string | null;
  }): string;
}

export type AlertRuleSpec = ExecutionRule | TimerRule;

/** D21: failure_rate and latency_spike say nothing about fewer executions than this. */
const minimumExecutions = 5;

const msPerHour = 60 * 60 * 1000;

/** Y of the windowed rules: windows look back over stored executions, at most 30 days. */
const lookback: RuleField = { unit: "hours", described: "hours", range: { above: 0, max: 720 } };

/** In this order in the API's "one of" message. */
export const alertRules = {
  consecutive_failures: {
    firesWhen: "the last X executions all failed",
    threshold: { unit: "executions", described: "a number of executions", range: { min: 1, integer: true } },
    windowHours: null,
    judged: "on-execution",
    async check({ threshold, entry, scope, history }) {
      const count = Math.ceil(threshold);
      const levels = await history.lastLevels(scope, entry.startedAt, count);
      if (levels.length < count || levels.some((level) => level !== "error")) return null;
      return { observed: count, reason: `${count} executions failed in a row` };
    },
    resolvesWhen: "an execution succeeds",
    async resolve({ entry }) {
      if (entry.level === "error") return null;
      return { observed: 0, reason: `An execution succeeded (started ${isoFromMs(entry.startedAt)})` };
    },
  },

  failure_rate: {
    firesWhen:
      `errors / executions over the last Y hours > X %, with at least ${minimumExecutions} executions ` +
      "and the workflow seen for Y hours",
    threshold: { unit: "percent", described: "a percentage", range: { min: 0, max: 100 } },
    windowHours: lookback,
    judged: "on-execution",
    async check(input) {
      const { threshold, entry, history, now } = input;
      if (entry.level !== "error") return null;
      const first = await history.firstStartedAt(entry.workflowId);
      // Not before the workflow has been watched for a whole window: a young workflow's rate is noise.
      if (first === undefined || first > now - windowOf(input.windowHours).windowMs) return null;
      const measured = await failureRateOf(input);
      if (measured.executions < minimumExecutions || measured.rate <= threshold) return null;
      return { observed: measured.rate, reason: `${measured.sentence}, above ${format(threshold)}%` };
    },
    resolvesWhen: "errors / executions over the last Y hours ≤ X %",
    async resolve(input) {
      const measured = await failureRateOf(input);
      if (measured.rate > input.threshold) return null;
      return {
        observed: measured.rate,
        reason: `${measured.sentence}, at or below ${format(input.threshold)}%`,
      };
    },
  },

  latency_threshold: {
    firesWhen: "an execution takes longer than X seconds",
    threshold: { unit: "seconds", described: "seconds", range: { above: 0 } },
    windowHours: null,
    judged: "on-execution",
    async check({ threshold, entry }) {
      const seconds = entry.totalDurationMs / 1000;
      if (seconds <= threshold) return null;
      return {
        observed: seconds,
        reason: `Execution took ${format(seconds)} s, above ${format(threshold)} s`,
      };
    },
    resolvesWhen: "an execution takes X seconds or less",
    async resolve({ threshold, entry }) {
      const seconds = entry.totalDurationMs / 1000;
      if (seconds > threshold) return null;
      return {
        observed: seconds,
        reason: `Execution took ${format(seconds)} s, within ${format(threshold)} s`,
      };
    },
  },

  latency_spike: {
    firesWhen:
      "an execution is X % slower than the average of the previous ones in the last Y hours " +
      `(at least ${minimumExecutions})`,
    // A spike is relative to the average: 300 (four times as slow) is as valid as 50.
    threshold: { unit: "percent", described: "a percentage", range: { above: 0 } },
    windowHours: lookback,
    judged: "on-execution",
    async check(input) {
      const spike = await spikeOf(input);
      if (spike === null || spike.increase <= input.threshold) return null;
      return {
        observed: spike.increase,
        reason:
          `Execution took ${spike.took}, ${format(spike.increase)}% above the average ${spike.average} ` +
          `of the last ${spike.hours}`,
      };
    },
    // Without a baseline of 5 the rule cannot hold, so such an execution ends a firing too.
    resolvesWhen: "an execution is at most X % slower than that average",
    async resolve(input) {
      const spike = await spikeOf(input);
      if (spike !== null && spike.increase > input.threshold) return null;
      const took = `Execution took ${format(input.entry.totalDurationMs / 1000)} s`;
      return spike === null
        ? {
            observed: 0,
            reason: `${took}, with fewer than ${minimumExecutions} earlier executions to compare`,
          }
        : {
            observed: spike.increase,
            reason:
              `${took}, within ${format(input.threshold)}% of the average ${spike.average} ` +
              `of the last ${spike.hours}`,
          };
    },
  },

  cost_threshold: {
    firesWhen: "an execution costs more than X USD",
    threshold: { unit: "USD", described: "USD", range: { above: 0 } },
    windowHours: null,
    judged: "on-execution",
    async check({ threshold, entry }) {
      if (entry.cost.total <= threshold) return null;
      return {
        observed: entry.cost.total,
        reason: `Execution cost $${format(entry.cost.total)}, above $${format(threshold)}`,
      };
    },
    resolvesWhen: "an execution costs X USD or less",
    async resolve({ threshold, entry }) {
      if (entry.cost.total > threshold) return null;
      return {
        observed: entry.cost.total,
        reason: `Execution cost $${format(entry.cost.total)}, within $${format(threshold)}`,
      };
    },
  },

  no_activity: {
    firesWhen: "no execution for X hours (a durable Temporal timer, not an execution, notices it)",
    threshold: { unit: "hours", described: "hours", range: { above: 0, max: 8760 } },
    windowHours: null,
    judged: "by-timer",
    silentUntil: (lastActivityAt, threshold, hourMs) => lastActivityAt + threshold * hourMs,
    reason: ({ workflowName, observed, threshold, lastActivityAt }) =>
      `No execution of ${workflowName} in ${format(observed)} hours (threshold ${format(threshold)} hours; ` +
      `${lastActivityAt === null ? "it has never run" : `last run ${lastActivityAt}`})`,
    // The completion path, not the timer, sees the execution that ends the silence.
    resolvesWhen: "an execution arrives",
    resolve: async ({ entry }) => ({
      observed: 0,
      reason: `An execution arrived (started ${isoFromMs(entry.startedAt)})`,
    }),
  },

  error_count: {
    firesWhen: "more than X errors in the last Y hours",
    // "More than X errors": 0 alerts on the first error.
    threshold: { unit: "errors", described: "a number of errors", range: { min: 0, integer: true } },
    windowHours: lookback,
    judged: "on-execution",
    async check(input) {
      if (input.entry.level !== "error") return null;
      const { errors, hours } = await failureRateOf(input);
      if (errors <= input.threshold) return null;
      return {
        observed: errors,
        reason: `${errors} executions failed in the last ${hours}, more than ${format(input.threshold)}`,
      };
    },
    // Errors that age out of the window while nothing runs are noticed by the next execution.
    resolvesWhen: "X errors or fewer in the last Y hours",
    async resolve(input) {
      const { errors, hours } = await failureRateOf(input);
      if (errors > input.threshold) return null;
      return {
        observed: errors,
        reason: `${errors} executions failed in the last ${hours}, no more than ${format(input.threshold)}`,
      };
    },
  },
} satisfies Record<string, AlertRuleSpec>;

export type AlertRuleName = keyof typeof alertRules;

export const alertRuleNames = Object.keys(alertRules) as readonly AlertRuleName[];

/** The rule of that name if a durable timer judges it (D21: no_activity), so it needs a watcher. */
export function timerRuleOf(name: string | undefined): { name: AlertRuleName; spec: TimerRule } | undefined {
  const spec: AlertRuleSpec | undefined = name === undefined ? undefined : ownRule(name);
  return spec?.judged === "by-timer" ? { name: name as AlertRuleName, spec } : undefined;
}

function ownRule(name: string): AlertRuleSpec | undefined {
  return Object.hasOwn(alertRules, name) ? alertRules[name as AlertRuleName] : undefined;
}

/**
 * Evaluates a subscription's rule on one completed execution of one workflow (D21): over that workflow's
 * executions that pass the trigger filter (empty = all; the level filter does not apply to rules).
 * A rule judged by a timer (no_activity) is not evaluated on executions: it answers null here.
 */
export async function evaluateAlertRule(
  rule: AlertRuleRecord,
  entry: LogEntryRecord,
  triggerFilter: readonly Trigger[],
  history: ExecutionHistory,
): Promise<FiredAlert | null> {
  const spec: AlertRuleSpec = alertRules[rule.rule];
  if (spec.judged !== "on-execution") return null;
  const fired = await spec.check(checkOf(rule, entry, triggerFilter, history));
  return fired && { rule: rule.rule, threshold: rule.threshold, windowHours: rule.windowHours, ...fired };
}

/**
 * D34: whether a firing of the subscription's rule is over on this completed execution, over the same
 * executions the rule fires on; null while the rule still holds. Timer rules are judged here too: an
 * execution is what ends a silence.
 */
export async function evaluateAlertResolution(
  rule: AlertRuleRecord,
  entry: LogEntryRecord,
  triggerFilter: readonly Trigger[],
  history: ExecutionHistory,
): Promise<Resolution | null> {
  return alertRules[rule.rule].resolve(checkOf(rule, entry, triggerFilter, history));
}

function checkOf(
  rule: AlertRuleRecord,
  entry: LogEntryRecord,
  triggerFilter: readonly Trigger[],
  history: ExecutionHistory,
) {
  const scope = { workflowId: entry.workflowId, triggers: triggerFilter };
  const { threshold, windowHours } = rule;
  return { threshold, windowHours, entry, scope, history, now: entry.endedAt };
}

/**
 * The errors among the scope's executions of the last Y hours up to this one (D21 failure_rate and
 * error_count, firing and resolving alike), with the sentence their reasons share.
 */
async function failureRateOf({ windowHours, entry, scope, history, now }: ExecutionCheck) {
  const { windowMs, hours } = windowOf(windowHours);
  const { executions, errors } = await history.windowStats({
    ...scope,
    fromStartedAt: now - windowMs,
    untilStartedAt: entry.startedAt,
  });
  const rate = executions === 0 ? 0 : (errors / executions) * 100;
  return {
    executions,
    errors,
    rate,
    hours,
    /** How failure_rate words it; error_count counts errors alone. */
    sentence: `${format(rate)}% of executions failed in the last ${hours} (${errors} of ${executions})`,
  };
}

/**
 * How much slower this execution is than the average of the previous ones of the last Y hours (D21
 * latency_spike), in percent; null without a baseline of at least 5.
 */
async function spikeOf({ windowHours, entry, scope, history, now }: ExecutionCheck) {
  const { windowMs, hours } = windowOf(windowHours);
  const previous = await history.windowStats({
    ...scope,
    fromStartedAt: now - windowMs,
    untilStartedAt: entry.startedAt,
    excludeLogId: entry.id,
  });
  if (previous.executions < minimumExecutions || !previous.averageDurationMs) return null;
  return {
    increase: ((entry.totalDurationMs - previous.averageDurationMs) / previous.averageDurationMs) * 100,
    took: `${format(entry.totalDurationMs / 1000)} s`,
    average: `${format(previous.averageDurationMs / 1000)} s`,
    hours,
  };
}

function windowOf(windowHours: number | null): { windowMs: number; hours: string } {
  // Validation on save requires a window for the rules that read one (D21).
  const hours = windowHours ?? 0;
  return { windowMs: hours * msPerHour, hours: `${format(hours)} h` };
}

/** Readable numbers in a sentence: at most two decimals, more only for amounts below a cent. */
function format(value: number): string {
  return Math.abs(value) < 0.01 && value !== 0
    ? String(Number(value.toPrecision(2)))
    : String(Math.round(value * 100) / 100);
}
