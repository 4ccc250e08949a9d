import { type AlertRuleRecord, evaluateAlertResolution, evaluateAlertRule } from "../domain/alert-rules.js";
import type { LogEntryRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { SubscriptionForDelivery } from "../store/subscriptions-store.js";
import { derivedId } from "../util/ids.js";
import { isoFromMs } from "../util/time.js";
import { type AlertResolvedEvent, buildAlertResolvedEvent } from "./alert-event.js";
import type { AlertPayload } from "./event.js";

/**
 * What a subscription's rule makes of one completed execution of a workflow: it fires (D21: the
 * completion event carries `data.alert`), its firing is over (D34: a `workflow.alert.resolved` event),
 * or null, nothing to send.
 */
export type AlertOutcome = { fired: AlertPayload } | { resolved: AlertResolvedEvent } | null;

/**
 * Judges the subscription's rule on the execution, and claims what it finds. Firing and resolution
 * alternate per (subscription, workflow) (D34): while the pair's firing of this rule is open, the
 * execution can only resolve it, never held back by the cooldown; otherwise it can only fire, within
 * D21's cooldown. Both claims are keyed by their event, so a retried fan-out finds its own claim again
 * and makes the same delivery.
 */
export async function alertOutcomeOf(
  store: Pick<Store, "alerts" | "workflows">,
  subscription: SubscriptionForDelivery,
  rule: AlertRuleRecord,
  entry: LogEntryRecord,
  completionEventId: string,
): Promise<AlertOutcome> {
  const state = await store.alerts.state(subscription.id, entry.workflowId);
  const resolutionEventId = resolutionEventIdOf(subscription.id, entry.id);
  const open = state?.status === "firing" && state.rule === rule.rule;
  const firedByThis = state?.lastEventId === completionEventId;
  if (!firedByThis && (open || state?.resolvedEventId === resolutionEventId)) {
    return resolvedAlert(store, subscription, rule, entry, resolutionEventId);
  }
  return firedAlert(store, subscription, rule, entry, completionEventId);
}

async function firedAlert(
  store: Pick<Store, "alerts">,
  subscription: SubscriptionForDelivery,
  rule: AlertRuleRecord,
  entry: LogEntryRecord,
  eventId: string,
): Promise<AlertOutcome> {
  const fired = await evaluateAlertRule(rule, entry, subscription.triggerFilter, store.alerts);
  if (!fired) return null;
  const claimed = await store.alerts.claim({
    subscriptionId: subscription.id,
    workflowId: entry.workflowId,
    rule: fired.rule,
    firedAt: entry.endedAt,
    eventId,
    reason: fired.reason,
  });
  return claimed ? { fired: { ...fired, firedAt: isoFromMs(entry.endedAt) } } : null;
}

async function resolvedAlert(
  store: Pick<Store, "alerts" | "workflows">,
  subscription: SubscriptionForDelivery,
  rule: AlertRuleRecord,
  entry: LogEntryRecord,
  eventId: string,
): Promise<AlertOutcome> {
  const resolution = await evaluateAlertResolution(rule, entry, subscription.triggerFilter, store.alerts);
  if (!resolution) return null;
  // D21 "now" is the execution's end, so a retried evaluation claims and builds the very same event.
  const resolvedAt = entry.endedAt;
  const firing = await store.alerts.resolve({
    subscriptionId: subscription.id,
    workflowId: entry.workflowId,
    rule: rule.rule,
    resolvedAt,
    eventId,
    reason: resolution.reason,
  });
  if (!firing) return null;
  const workflow = await store.workflows.getWorkflow(entry.workflowId);
  return {
    resolved: buildAlertResolvedEvent({
      eventId,
      workflow: { id: entry.workflowId, name: workflow?.name ?? entry.workflowId },
      rule,
      firing: { eventId: firing.lastEventId, firedAtMs: firing.lastFiredAt, reason: firing.reason },
      reason: resolution.reason,
      observed: resolution.observed,
      resolvedAtMs: resolvedAt,
      logId: entry.id,
    }),
  };
}

/** One resolution event per (subscription, execution): each subscription resolves a firing of its own. */
function resolutionEventIdOf(subscriptionId: string, logId: string): string {
  const key = `resolved:${subscriptionId}:${logId}`;
  return derivedId("evt", key);
}
