import { create } from "@bufbuild/protobuf";
import {
  type NotificationSubscription,
  NotificationSubscriptionSchema,
} from "../../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { leaveOut } from "../../codegen/serializers/runtime/presence.js";
import type { AlertStateRecord } from "../../store/alert-rows.js";
import type { SubscriptionRecord, WebhookConfig } from "../../store/subscriptions-store.js";
import { isoFromMs } from "../../util/time.js";

/**
 * A subscription as the API shows it: the webhook secret only as hasSecret (D18, D24), its headers only by
 * name (D38), until when a replaced secret still signs if `now` is within a rotation's grace period (D33),
 * when its rule last fired for each workflow (D21), and its hold with the count of deliveries in it (D36).
 */
export function subscriptionView(
  subscription: SubscriptionRecord,
  alertStates: readonly AlertStateRecord[],
  now: number,
  heldCount = 0,
): NotificationSubscription {
  const { alertRule, config, include } = subscription;
  const view = create(NotificationSubscriptionSchema, {
    id: subscription.id,
    workspaceId: subscription.workspaceId,
    channel: config.channel,
    webhook: config.channel === "webhook" ? webhookView(config, subscription, now) : undefined,
    email: config.channel === "email" ? { recipients: config.recipients } : undefined,
    slack: config.channel === "slack" ? { url: config.url } : undefined,
    workflowIds: subscription.workflowIds,
    allWorkflows: subscription.allWorkflows,
    levelFilter: subscription.levelFilter,
    triggerFilter: subscription.triggerFilter,
    includeFinalOutput: include.finalOutput,
    includeTraceSpans: include.traceSpans,
    includeRateLimits: include.rateLimits,
    includeUsageData: include.usage,
    alertRule: alertRule
      ? {
          rule: alertRule.rule,
          threshold: alertRule.threshold,
          windowHours: alertRule.windowHours ?? undefined,
        }
      : undefined,
    active: subscription.active,
    eventTypes: subscription.eventTypes,
    // D38: absent when deliveries are not paced (D30).
    ...(subscription.throttlePerSecond === null ? {} : { throttlePerSecond: subscription.throttlePerSecond }),
    // D35: flowlog's own disable, and the run of failed deliveries while there is one; absent otherwise (D30).
    ...(subscription.disabledReason === null ? {} : { disabledReason: subscription.disabledReason }),
    ...(subscription.disabledAt === null ? {} : { disabledAt: isoFromMs(subscription.disabledAt) }),
    ...(subscription.failingSince === null
      ? {}
      : {
          failingSince: isoFromMs(subscription.failingSince),
          failedDeliveries: subscription.failedDeliveries,
        }),
    // D36: the hold's start and what waits in it only while there is one (D30).
    state: subscription.holdState,
    ...(subscription.heldAt === null ? {} : { heldSince: isoFromMs(subscription.heldAt), heldCount }),
    createdAt: isoFromMs(subscription.createdAt),
    updatedAt: isoFromMs(subscription.updatedAt),
    alertStates: alertStates.map((state) => ({
      workflowId: state.workflowId,
      rule: state.rule,
      lastFiredAt: isoFromMs(state.lastFiredAt),
      reason: state.reason,
      // D34: firing until the rule stops holding; the resolution's time and reason only once it has.
      status: state.status,
      ...(state.resolvedAt === null ? {} : { resolvedAt: isoFromMs(state.resolvedAt) }),
      ...(state.resolutionReason === null ? {} : { resolutionReason: state.resolutionReason }),
    })),
  });
  // The headers' values are input only (D38): the empty map is left out, not written as {}.
  if (view.webhook) leaveOut(view.webhook, "headers");
  return view;
}

function webhookView(config: WebhookConfig, subscription: SubscriptionRecord, now: number) {
  const expiresAt = subscription.previousSecretExpiresAt;
  const inGrace = expiresAt !== null && now < expiresAt;
  return {
    url: config.url,
    hasSecret: subscription.hasSecret,
    ...(inGrace ? { previousSecretExpiresAt: isoFromMs(expiresAt) } : {}),
    headerNames: config.headerNames,
    signatureScheme: config.signatureScheme,
    propagateTraceContext: config.propagateTraceContext,
  };
}
