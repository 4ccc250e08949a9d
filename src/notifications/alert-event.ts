import { isoFromMs } from "../util/time.js";
import type { AlertPayload } from "./event.js";

/**
 * D21: an inactivity alert has no completed execution to describe, so it is its own event type rather than
 * a `workflow.execution.completed` payload with a made-up execution.
 */
export const alertFiredEventType = "workflow.alert.fired";

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

export interface NoActivityAlert {
  eventId: string;
  firedAtMs: number;
  workflow: { id: string; name: string };
  /** X of the rule, in hours. */
  thresholdHours: number;
  /** Hours of silence when the alert fired. */
  observedHours: number;
  lastExecutionAtMs: number | null;
}

/** The one builder of the no-activity alert (D21), for every channel. */
export function buildAlertFiredEvent(input: NoActivityAlert): AlertFiredEvent {
  const { workflow, thresholdHours, lastExecutionAtMs } = input;
  const observed = Math.round(input.observedHours * 100) / 100;
  const since = lastExecutionAtMs === null ? "it has never run" : `last run ${isoFromMs(lastExecutionAtMs)}`;
  return {
    id: input.eventId,
    type: alertFiredEventType,
    timestamp: input.firedAtMs,
    data: {
      workflowId: workflow.id,
      workflowName: workflow.name,
      alert: {
        rule: "no_activity",
        reason: `No execution of ${workflow.name} in ${observed} hours (threshold ${thresholdHours} hours; ${since})`,
        threshold: thresholdHours,
        observed,
        // The silence the rule waits for is its window (D21: no execution in X hours).
        windowHours: thresholdHours,
        firedAt: isoFromMs(input.firedAtMs),
      },
      lastExecutionAt: lastExecutionAtMs === null ? null : isoFromMs(lastExecutionAtMs),
    },
  };
}
