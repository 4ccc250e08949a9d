/**
 * The alert rules (D21) as the public API documents them at AlertRule in notifications_service.proto: each
 * rule's name, the unit of its X (`threshold`), whether it takes a Y (`windowHours`, refused by the rules
 * without one) and when it fires. The console labels its inputs with these and checks nothing: ranges and
 * names are the API's to judge, and its refusal names the field.
 */
export interface AlertRuleKind {
  rule: string;
  /** The unit of X. */
  unit: string;
  /** Whether the rule takes Y, in hours. */
  windowed: boolean;
  firesWhen: string;
}

export const alertRuleKinds: readonly AlertRuleKind[] = [
  {
    rule: "consecutive_failures",
    unit: "executions",
    windowed: false,
    firesWhen: "the last X executions all failed",
  },
  {
    rule: "failure_rate",
    unit: "percent",
    windowed: true,
    firesWhen: "errors / executions over the last Y hours exceed X %",
  },
  {
    rule: "latency_threshold",
    unit: "seconds",
    windowed: false,
    firesWhen: "an execution takes longer than X seconds",
  },
  {
    rule: "latency_spike",
    unit: "percent",
    windowed: true,
    firesWhen: "an execution is X % slower than the average of the last Y hours",
  },
  { rule: "cost_threshold", unit: "USD", windowed: false, firesWhen: "an execution costs more than X USD" },
  {
    rule: "error_count",
    unit: "errors",
    windowed: true,
    firesWhen: "more than X errors in the last Y hours",
  },
  { rule: "no_activity", unit: "hours", windowed: false, firesWhen: "no execution for X hours" },
];

export function alertRuleKind(rule: string | undefined): AlertRuleKind | undefined {
  return alertRuleKinds.find((kind) => kind.rule === rule);
}
