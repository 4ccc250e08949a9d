/**
 * The types of event a subscription can receive (D38), and the one rule of which it does receive: the
 * event builders (notifications/) name their type from here, and every place that makes a delivery for a
 * subscription asks `receivesEventType` first.
 */

/** An execution completed (spec "Events"); an alert on an execution is this type, with `data.alert` (D21). */
export const completionEventType = "workflow.execution.completed";
/** A no_activity silence reached its threshold: there is no execution to describe (D21). */
export const alertFiredEventType = "workflow.alert.fired";
/** A fired rule stopped holding for a workflow (D34). */
export const alertResolvedEventType = "workflow.alert.resolved";

/** What a subscription receives unless it says otherwise, and what one made before D38 receives. */
export const defaultEventTypes = [completionEventType, alertFiredEventType, alertResolvedEventType] as const;

/** The operational events of D36 and D38: about a subscription's endpoint and its deliveries. */
export const operationalEventTypes = [
  "subscription.held",
  "subscription.released",
  "subscription.disabled",
  "delivery.failed",
] as const;

/** A delivery ended failed (D38): notifications/delivery-failed-event.ts builds it. */
export const deliveryFailedEventType = "delivery.failed" satisfies (typeof operationalEventTypes)[number];

/** Every type `eventTypes` may list (the .proto declares the same list). */
export const subscribableEventTypes = [...defaultEventTypes, ...operationalEventTypes] as const;
export type SubscribableEventType = (typeof subscribableEventTypes)[number];

/** Whether a subscription gets events of `type` (D38). */
export function receivesEventType(
  subscription: { eventTypes: readonly string[] },
  type: SubscribableEventType,
): boolean {
  return subscription.eventTypes.includes(type);
}
