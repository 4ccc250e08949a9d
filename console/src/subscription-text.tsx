import type {
  AlertRule,
  NotificationSubscription,
} from "../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { formatCount, formatTime } from "./format.js";
import { alertRuleKind } from "./subscription-alert-rules.js";

/**
 * A subscription in words, one place for the subscriptions list, a subscription's page and the delivery
 * log: where it sends, what it selects, and whether it is on (in text, never by colour alone).
 */

export const channelLabels: Record<string, string> = {
  webhook: "Webhook",
  email: "E-mail",
  slack: "Chat (Slack-compatible)",
};

/** Where deliveries go: the webhook or chat URL, or the e-mail recipients. */
export function targetOf(subscription: NotificationSubscription): string {
  if (subscription.webhook) return subscription.webhook.url;
  if (subscription.slack) return subscription.slack.url;
  return subscription.email?.recipients.join(", ") ?? "";
}

/** "Webhook https://…", for places that name a subscription in one line. */
export function subscriptionLabel(subscription: NotificationSubscription): string {
  return `${channelLabels[subscription.channel] ?? subscription.channel} ${targetOf(subscription)}`;
}

export function workflowsOf(
  subscription: NotificationSubscription,
  nameOf: (workflowId: string) => string,
): string {
  if (subscription.allWorkflows) return "All workflows, new ones included";
  return subscription.workflowIds.map(nameOf).join(", ");
}

/** An empty filter means all (D18). */
export function filterText(values: readonly string[], all: string): string {
  return values.length ? values.join(", ") : all;
}

export function includesOf(subscription: NotificationSubscription): string {
  const parts = [
    subscription.includeFinalOutput && "final output",
    subscription.includeTraceSpans && "trace spans",
    subscription.includeRateLimits && "rate limits",
    subscription.includeUsageData && "usage data",
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "none";
}

/** "failure_rate: X = 25 percent over Y = 24 hours", or "none". */
export function ruleText(rule: AlertRule | undefined): string {
  if (!rule?.rule) return "none";
  const unit = alertRuleKind(rule.rule)?.unit ?? "";
  const window = rule.windowHours === undefined ? "" : ` over Y = ${rule.windowHours} hours`;
  return `${rule.rule}: X = ${rule.threshold} ${unit}${window}`;
}

export interface SubscriptionStatus {
  /** Active, Held, Draining or Disabled: the word a reader and a screen reader both get. */
  label: "Active" | "Held" | "Draining" | "Disabled";
  /** Why, when flowlog disabled it or its deliveries are failing (D35), held or draining (D36). */
  detail?: string;
}

export function statusOf(subscription: NotificationSubscription): SubscriptionStatus {
  if (subscription.active === false) {
    if (!subscription.disabledReason) return { label: "Disabled" };
    return {
      label: "Disabled",
      detail: `flowlog disabled it at ${formatTime(subscription.disabledAt)}: ${subscription.disabledReason}`,
    };
  }
  // D36: a hold says what waits and since when.
  const held = formatCount(subscription.heldCount ?? 0);
  if (subscription.state === "held") {
    return {
      label: "Held",
      detail:
        `its endpoint keeps failing: ${held} held since ${formatTime(subscription.heldSince)}, ` +
        "sent once a probe gets through",
    };
  }
  if (subscription.state === "draining") {
    return { label: "Draining", detail: `its endpoint answers again: ${held} held, sending oldest first` };
  }
  if (!subscription.failingSince) return { label: "Active" };
  return {
    label: "Active",
    detail:
      `every delivery has failed since ${formatTime(subscription.failingSince)} ` +
      `(${formatCount(subscription.failedDeliveries)} failed)`,
  };
}

/** The status word, then why. */
export function StatusText({ subscription }: { subscription: NotificationSubscription }) {
  const { label, detail } = statusOf(subscription);
  return (
    <>
      <span class={`status ${label.toLowerCase()}`}>{label}</span>
      {detail && ` — ${detail}`}
    </>
  );
}
