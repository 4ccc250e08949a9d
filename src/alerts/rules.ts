import type { AlertsStore, ExecutionScope } from "../store/alerts-store.js";
import type { LogEntryRecord, Trigger } from "../store/records.js";
import type { AlertRuleName, AlertRuleRecord } from "../store/subscriptions-store.js";

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

/** The part of the store the rules read. */
export type ExecutionHistory = Pick<AlertsStore, "lastLevels" | "windowStats" | "firstStartedAt">;

/** D21: failure_rate and latency_spike say nothing about fewer executions than this. */
export const minimumExecutions = 5;

const hourMs = 60 * 60 * 1000;

interface Evaluation {
  rule: AlertRuleRecord;
  entry: LogEntryRecord;
  scope: ExecutionScope;
  history: ExecutionHistory;
  /** D21 "now": the tripping execution's end, so a replayed evaluation sees the same window. */
  now: number;
}

type Check = (evaluation: Evaluation) => Omit<FiredAlert, "rule" | "threshold" | "windowHours"> | null;

/**
 * The execution-driven rules of D21. Each sees only executions started no later than the tripping one, so
 * the answer for an execution does not depend on when the fan-out runs. The error-driven rules trip only
 * on an error: a success cannot be the execution that tripped them.
 */
const checks: Record<Exclude<AlertRuleName, "no_activity">, Check> = {
  consecutive_failures({ rule, entry, scope, history }) {
    const count = Math.ceil(rule.threshold);
    const levels = history.lastLevels(scope, entry.startedAt, count);
    if (levels.length < count || levels.some((level) => level !== "error")) return null;
    return { observed: count, reason: `${count} executions failed in a row` };
  },

  failure_rate({ rule, entry, scope, history, now }) {
    if (entry.level !== "error") return null;
    const { windowMs, hours } = windowOf(rule);
    const first = history.firstStartedAt(entry.workflowId);
    // Not before the workflow has been watched for a whole window: a young workflow's rate is noise.
    if (first === undefined || first > now - windowMs) return null;
    const stats = history.windowStats({
      ...scope,
      fromStartedAt: now - windowMs,
      untilStartedAt: entry.startedAt,
    });
    if (stats.executions < minimumExecutions) return null;
    const rate = (stats.errors / stats.executions) * 100;
    if (rate <= rule.threshold) return null;
    return {
      observed: rate,
      reason:
        `${format(rate)}% of executions failed in the last ${hours} (${stats.errors} of ${stats.executions}), ` +
        `above ${format(rule.threshold)}%`,
    };
  },

  latency_threshold({ rule, entry }) {
    const seconds = entry.totalDurationMs / 1000;
    if (seconds <= rule.threshold) return null;
    return {
      observed: seconds,
      reason: `Execution took ${format(seconds)} s, above ${format(rule.threshold)} s`,
    };
  },

  latency_spike({ rule, entry, scope, history, now }) {
    const { windowMs, hours } = windowOf(rule);
    const previous = history.windowStats({
      ...scope,
      fromStartedAt: now - windowMs,
      untilStartedAt: entry.startedAt,
      excludeLogId: entry.id,
    });
    if (previous.executions < minimumExecutions || !previous.averageDurationMs) return null;
    const increase =
      ((entry.totalDurationMs - previous.averageDurationMs) / previous.averageDurationMs) * 100;
    if (increase <= rule.threshold) return null;
    return {
      observed: increase,
      reason:
        `Execution took ${format(entry.totalDurationMs / 1000)} s, ${format(increase)}% above the average ` +
        `${format(previous.averageDurationMs / 1000)} s of the last ${hours}`,
    };
  },

  cost_threshold({ rule, entry }) {
    if (entry.cost.total <= rule.threshold) return null;
    return {
      observed: entry.cost.total,
      reason: `Execution cost $${format(entry.cost.total)}, above $${format(rule.threshold)}`,
    };
  },

  error_count({ rule, entry, scope, history, now }) {
    if (entry.level !== "error") return null;
    const { windowMs, hours } = windowOf(rule);
    const { errors } = history.windowStats({
      ...scope,
      fromStartedAt: now - windowMs,
      untilStartedAt: entry.startedAt,
    });
    if (errors <= rule.threshold) return null;
    return {
      observed: errors,
      reason: `${errors} executions failed in the last ${hours}, more than ${format(rule.threshold)}`,
    };
  },
};

/**
 * Evaluates a subscription's rule on one completed execution of one workflow (D21): over that workflow's
 * executions that pass the trigger filter (empty = all; the level filter does not apply to rules).
 * no_activity is not evaluated on executions: it answers null here.
 */
export function evaluateAlertRule(
  rule: AlertRuleRecord,
  entry: LogEntryRecord,
  triggerFilter: readonly Trigger[],
  history: ExecutionHistory,
): FiredAlert | null {
  if (rule.rule === "no_activity") return null;
  const scope = { workflowId: entry.workflowId, triggers: triggerFilter };
  const fired = checks[rule.rule]({ rule, entry, scope, history, now: entry.endedAt });
  return fired && { rule: rule.rule, threshold: rule.threshold, windowHours: rule.windowHours, ...fired };
}

function windowOf(rule: AlertRuleRecord): { windowMs: number; hours: string } {
  // Validation on save requires a window for these rules (D21).
  const hours = rule.windowHours ?? 0;
  return { windowMs: hours * hourMs, hours: `${format(hours)} h` };
}

/** Readable numbers in a sentence: at most two decimals, more only for amounts below a cent. */
function format(value: number): string {
  return Math.abs(value) < 0.01 && value !== 0
    ? String(Number(value.toPrecision(2)))
    : String(Math.round(value * 100) / 100);
}
