import { timerRuleOf } from "../../domain/alert-rules.js";
import { alertFiredEventType, receivesEventType } from "../../domain/event-types.js";
import { selectsWorkflow } from "../../domain/subscription-matching.js";
import { buildAlertFiredEvent } from "../../notifications/alert-event.js";
import { alertCooldownMs } from "../../store/alerts-store.js";
import type { SubscriptionForDelivery } from "../../store/subscriptions-store.js";
import { derivedId, newId } from "../../util/ids.js";
import type { DeliveryTarget } from "../delivery-ids.js";
import type { InactivityWatch } from "../inactivity-ids.js";
import type { ActivityDeps } from "./deps.js";

const msPerHour = 3_600_000;

/** What a watcher does next: stop for good, or come back at `dueAt` (now or later). */
export type InactivityPlan = { kind: "stop" } | { kind: "due"; dueAt: number; waitMs: number };

/**
 * The side effects of the no-activity watcher (D21): reading the rule and the workflow's last execution,
 * claiming the cooldown and creating the alert's delivery. The watcher workflow only sleeps and loops.
 */
export function inactivityActivities(deps: ActivityDeps) {
  const hourMs = deps.notifications?.alertHourMs ?? msPerHour;
  const cooldownMs = (alertCooldownMs / msPerHour) * hourMs;

  /**
   * The watch's subscription and X, while the watch still applies; undefined means stop. A watch pairs a
   * subscription with a workflow of its own workspace: a watcher anyone could start on the task queue
   * pairing one with another tenant's workflow (issue 49) would send that workflow's name and activity
   * to the subscription's URL, so it stops at its first look, having sent nothing.
   */
  const watched = async (watch: InactivityWatch) => {
    const subscription = await deps.store.notifications.getForDelivery(watch.subscriptionId);
    const workflow = await deps.store.workflows.getWorkflow(watch.workflowId);
    if (!subscription || workflow?.workspaceId !== subscription.workspaceId) return undefined;
    if (!applies(subscription, watch.workflowId)) return undefined;
    const rule = timerRuleOf(subscription.alertRule?.rule);
    if (workflow.deletedAt !== null || !subscription.alertRule || !rule) return undefined;
    const lastExecutionAt = await deps.store.inactivity.lastExecutionAt(
      watch.workflowId,
      subscription.triggerFilter,
    );
    const thresholdHours = subscription.alertRule.threshold;
    const silentAfter = (from: number) => rule.spec.silentUntil(from, thresholdHours, hourMs);
    return {
      rule: rule.name,
      subscription,
      workflow,
      thresholdHours,
      lastExecutionAt,
      silentUntil: silentAfter(lastExecutionAt ?? watch.sinceMs),
      silentAfter,
    };
  };

  return {
    /**
     * When the watcher should next look: at the end of the silence, or of the cooldown if that is later.
     * D34: while its alert is open, only an execution ends it (the completion path resolves it), and the
     * next alert then needs X hours of silence after that execution: looking again X hours from now is
     * never late.
     */
    async planInactivityCheck(watch: InactivityWatch): Promise<InactivityPlan> {
      const state = await watched(watch);
      if (!state) return { kind: "stop" };
      const now = Date.now();
      const alert = await deps.store.alerts.state(watch.subscriptionId, watch.workflowId);
      const open = alert?.status === "firing" && alert.rule === state.rule;
      const silentUntil = open ? state.silentAfter(now) : state.silentUntil;
      const dueAt = Math.max(silentUntil, alert === undefined ? 0 : alert.lastFiredAt + cooldownMs);
      return { kind: "due", dueAt, waitMs: Math.max(0, dueAt - now) };
    },

    /**
     * Fires the alert due at `dueAt` if the workflow is still silent and the cooldown is free: claims it and
     * creates the delivery of a `workflow.alert.fired` event, unless the subscription does not take that
     * type (D38): the firing still counts, so the watcher waits out the cooldown rather than firing again.
     * The event id follows from the watch and `dueAt`, so a retried activity finds its own claim and
     * delivery instead of making a second one.
     */
    async fireInactivityAlert(input: InactivityWatch & { dueAt: number }): Promise<DeliveryTarget | null> {
      const state = await watched(input);
      const firedAt = Date.now();
      if (!state || firedAt < state.silentUntil) return null;
      const { subscription, workflow } = state;
      const event = buildAlertFiredEvent({
        eventId: alertEventIdOf(input, input.dueAt),
        firedAtMs: firedAt,
        rule: state.rule,
        workflow: { id: workflow.id, name: workflow.name },
        thresholdHours: state.thresholdHours,
        observedHours: (firedAt - (state.lastExecutionAt ?? input.sinceMs)) / hourMs,
        lastExecutionAtMs: state.lastExecutionAt,
      });
      const claimed = await deps.store.alerts.claim({
        subscriptionId: subscription.id,
        workflowId: workflow.id,
        rule: state.rule,
        firedAt,
        eventId: event.id,
        reason: event.data.alert.reason,
        cooldownMs,
      });
      if (!claimed || !receivesEventType(subscription, alertFiredEventType)) return null;
      const id = newId("dlv");
      const delivery = await deps.store.deliveries.createOnce({
        id,
        eventId: event.id,
        eventType: event.type,
        subscriptionId: subscription.id,
        workspaceId: subscription.workspaceId,
        logId: null,
        event,
        createdAt: firedAt,
      });
      // Counted once: a retried claim finds the delivery its first try made.
      if (delivery.id === id) deps.metrics?.alerted(state.rule, "fired");
      return {
        deliveryId: delivery.id,
        workspaceId: subscription.workspaceId,
        workflowId: workflow.id,
        subscriptionId: subscription.id,
      };
    },
  };
}

/** Live, enabled and still selecting the workflow: otherwise the watch is over. */
function applies(subscription: SubscriptionForDelivery, workflowId: string): boolean {
  return subscription.deletedAt === null && subscription.active && selectsWorkflow(subscription, workflowId);
}

/** One alert event per (watch, due time): the same on every retry of the activity that fires it. */
function alertEventIdOf(watch: InactivityWatch, dueAt: number): string {
  // The key's text is part of stored event ids: it stays as it was when no_activity was the only timer rule.
  const key = `no_activity:${watch.subscriptionId}:${watch.workflowId}:${dueAt}`;
  return derivedId("evt", key);
}
