import { type AlertRuleName, timerRuleOf } from "../domain/alert-rules.js";
import { alertFiredEventType, alertResolvedEventType } from "../domain/event-types.js";
import { isoFromMs } from "../util/time.js";
import type { AlertPayload } from "./event.js";

/**
 * D21: an inactivity alert has no completed execution to describe, so it is its own event type rather than
 * a `workflow.execution.completed` payload with a made-up execution.
 */
export interface AlertFiredEvent {
  id: string;
  type: typeof alertFiredEventType;
  /** Unix milliseconds, an integer, like the completion event's. */
  timestamp: number;
  data: {
    workflowId: string;
    workflowName: string;
    /** The same object a rule puts on a completion event (D21). */
    alert: AlertPayload;
    /** null when the workflow has never run. */
    lastExecutionAt: string | null;
  };
}

/** An alert fired by a durable timer rather than an execution (D21: no_activity). */
export interface TimerAlert {
  eventId: string;
  firedAtMs: number;
  /** The rule, a timer-judged one of the alert-rule table. */
  rule: AlertRuleName;
  workflow: { id: string; name: string };
  /** X of the rule, in hours. */
  thresholdHours: number;
  /** Hours of silence when the alert fired. */
  observedHours: number;
  lastExecutionAtMs: number | null;
}

/** The one builder of a timer-fired alert (D21), for every channel; its sentence is the rule's. */
export function buildAlertFiredEvent(input: TimerAlert): AlertFiredEvent {
  const { rule, workflow, thresholdHours, lastExecutionAtMs } = input;
  const observed = Math.round(input.observedHours * 100) / 100;
  const lastActivityAt = lastExecutionAtMs === null ? null : isoFromMs(lastExecutionAtMs);
  const reason = timerRuleOf(rule)?.spec.reason({
    workflowName: workflow.name,
    observed,
    threshold: thresholdHours,
    lastActivityAt,
  });
  if (reason === undefined) throw new Error(`${rule} is not an alert rule judged by a timer`);
  return {
    id: input.eventId,
    type: alertFiredEventType,
    timestamp: input.firedAtMs,
    data: {
      workflowId: workflow.id,
      workflowName: workflow.name,
      alert: {
        rule,
        reason,
        threshold: thresholdHours,
        observed,
        // The silence the rule waits for is its window (D21: no execution in X hours).
        windowHours: thresholdHours,
        firedAt: isoFromMs(input.firedAtMs),
      },
      lastExecutionAt: lastActivityAt,
    },
  };
}

/** D34: a fired rule stopped holding for a workflow; one per firing, after it. */
export interface AlertResolvedEvent {
  id: string;
  type: typeof alertResolvedEventType;
  /** Unix milliseconds: the resolving execution's end. */
  timestamp: number;
  data: {
    workflowId: string;
    workflowName: string;
    /** The firing this resolves: its event's id, when it fired and why, under the rule as now set. */
    alert: {
      rule: string;
      reason: string;
      threshold: number;
      windowHours: number | null;
      firedAt: string;
      eventId: string;
    };
    /** Why the rule no longer holds: its measure on the resolving execution, in the unit of X. */
    resolution: {
      reason: string;
      observed: number;
      resolvedAt: string;
      /** The log entry of the execution that showed it. */
      logId: string;
    };
  };
}

/** What a resolution is made of: the firing it ends and the execution that ended it (D34). */
export interface AlertResolution {
  eventId: string;
  workflow: { id: string; name: string };
  rule: { rule: AlertRuleName; threshold: number; windowHours: number | null };
  firing: { eventId: string; firedAtMs: number; reason: string };
  reason: string;
  observed: number;
  resolvedAtMs: number;
  logId: string;
}

/** The one builder of the resolution event (D34), for every channel. */
export function buildAlertResolvedEvent(input: AlertResolution): AlertResolvedEvent {
  const { workflow, rule, firing } = input;
  return {
    id: input.eventId,
    type: alertResolvedEventType,
    timestamp: input.resolvedAtMs,
    data: {
      workflowId: workflow.id,
      workflowName: workflow.name,
      alert: {
        rule: rule.rule,
        reason: firing.reason,
        threshold: rule.threshold,
        windowHours: rule.windowHours,
        firedAt: isoFromMs(firing.firedAtMs),
        eventId: firing.eventId,
      },
      resolution: {
        reason: input.reason,
        observed: input.observed,
        resolvedAt: isoFromMs(input.resolvedAtMs),
        logId: input.logId,
      },
    },
  };
}
