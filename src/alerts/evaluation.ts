import {
  type AlertRuleName,
  type AlertRuleSpec,
  alertRules,
  type ExecutionHistory,
  type Resolution,
} from "../domain/alert-rules.js";
import type { LogEntryRecord, Trigger } from "../store/records.js";
import type { AlertRuleRecord } from "../store/subscriptions-store.js";

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
