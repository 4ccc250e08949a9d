import { defaultAutoDisablePolicy, nextAutoDisableStep } from "../../domain/auto-disable.js";
import { logger } from "../../logging/logger.js";
import { buildEndpointNoticeEmail, sendEmailAttempt } from "../../notifications/email.js";
import {
  buildEndpointNotice,
  type EndpointNoticeEvent,
  endpointDisabledEventType,
  endpointFailingEventType,
} from "../../notifications/endpoint-notice.js";
import { subscriptionDisabledEventType } from "../../notifications/hold-notice.js";
import { type AttemptResult, deliveryTimeoutMs } from "../../notifications/http-channel.js";
import type { EndpointHealth } from "../../store/endpoint-health-rows.js";
import type { ChannelConfig } from "../../store/subscriptions-store.js";
import { derivedId, newId } from "../../util/ids.js";
import { isoFromMs } from "../../util/time.js";
import type { DeliveryTarget } from "../delivery-ids.js";
import type { EndpointWatch } from "../endpoint-health-ids.js";
import type { ActivityDeps } from "./deps.js";
import { tellWorkspace } from "./hold-notices.js";

/** What the endpoint-health watcher does next: stop, sleep (a failure may wake it sooner), or act. */
export type EndpointCheckPlan =
  | { kind: "stop" }
  | { kind: "wait"; waitMs: number }
  | { kind: "notice" | "disable"; failingSince: number };

/** The run an action was decided for: a success or a new run since then makes it a no-op. */
export type EndpointAction = EndpointWatch & { failingSince: number };

type FailingEndpoint = EndpointHealth & {
  channel: "webhook" | "slack";
  run: NonNullable<EndpointHealth["run"]>;
};

/**
 * The side effects of D35's watcher: reading the run, claiming the notice, disabling, and creating the
 * notice deliveries to the workspace's e-mail subscriptions, each with its line in the operator log. The
 * decisions are domain/auto-disable.ts's; the workflow only sleeps and loops.
 */
export function endpointHealthActivities(deps: ActivityDeps) {
  const policy = deps.notifications?.autoDisable ?? defaultAutoDisablePolicy;
  const clock = deps.clock ?? Date.now;
  const log = (deps.logger ?? logger).child({ component: "endpoint-health" });

  /** The subscription while its run is the one the action was decided for; undefined otherwise. */
  const failing = async (
    subscriptionId: string,
    failingSince?: number,
  ): Promise<FailingEndpoint | undefined> => {
    const health = await deps.store.endpointHealth.get(subscriptionId);
    if (!health?.run || health.deleted || health.channel === "email") return undefined;
    if (failingSince !== undefined && health.run.failingSince !== failingSince) return undefined;
    return health as FailingEndpoint;
  };

  /**
   * One delivery of the notice per live e-mail subscription of the workspace, whatever its selection:
   * the notice is about the workspace's own endpoint. The event id follows from the run and the kind, so
   * a retried activity makes the same deliveries, never a second set.
   */
  const notify = async (endpoint: FailingEndpoint, event: EndpointNoticeEvent): Promise<DeliveryTarget[]> => {
    const mailboxes = (await deps.store.notifications.list(endpoint.workspaceId)).filter(
      (subscription) => subscription.active && subscription.config.channel === "email",
    );
    return Promise.all(
      mailboxes.map(async (subscription) => {
        const delivery = await deps.store.deliveries.createOnce({
          id: newId("dlv"),
          eventId: event.id,
          eventType: event.type,
          subscriptionId: subscription.id,
          workspaceId: endpoint.workspaceId,
          logId: null,
          event,
          createdAt: event.timestamp,
        });
        return {
          deliveryId: delivery.id,
          workspaceId: endpoint.workspaceId,
          subscriptionId: subscription.id,
        };
      }),
    );
  };

  const noticeOf = (
    endpoint: FailingEndpoint,
    type: EndpointNoticeEvent["type"],
    disabledAtMs: number,
  ): EndpointNoticeEvent =>
    buildEndpointNotice({
      eventId: noticeEventIdOf(type, endpoint.subscriptionId, endpoint.run.failingSince),
      type,
      atMs: clock(),
      subscriptionId: endpoint.subscriptionId,
      channel: endpoint.channel,
      url: endpoint.url,
      failingSinceMs: endpoint.run.failingSince,
      failedDeliveries: endpoint.run.failedDeliveries,
      lastError: endpoint.run.lastFailure,
      disabledAtMs,
    });

  /** The operator's line (D35): ids, the endpoint's label and the error; never a secret or a full URL. */
  const logNotice = (event: EndpointNoticeEvent, workspaceId: string, message: string) =>
    log.warn({ event: event.type, workspaceId, ...event.data }, message);

  return {
    /** What is due for the subscription's run now, from domain/auto-disable.ts, or stop when it is over. */
    async planEndpointCheck({ subscriptionId }: EndpointWatch): Promise<EndpointCheckPlan> {
      const endpoint = await failing(subscriptionId);
      if (!endpoint?.active) return { kind: "stop" };
      const now = clock();
      const step = nextAutoDisableStep(endpoint.run, policy, now);
      if (step.kind !== "wait") return { kind: step.kind, failingSince: endpoint.run.failingSince };
      // Nothing due by time until more failures: one wakes the watcher; else it looks again a period on.
      const until = step.until ?? now + policy.failingForMs;
      return { kind: "wait", waitMs: Math.max(1, until - now) };
    },

    /** D35's advance notice: claimed once per run, e-mailed to the workspace and logged for the operator. */
    async noticeFailingEndpoint({ subscriptionId, failingSince }: EndpointAction): Promise<DeliveryTarget[]> {
      const claimed = await deps.store.endpointHealth.claimNotice(subscriptionId, failingSince, clock());
      // Read after the claim: a retry finds its own claim, and the run as the notice was made for it.
      const endpoint = await failing(subscriptionId, failingSince);
      if (!endpoint?.run.noticedAt) return [];
      const { noticedAt } = endpoint.run;
      const disablesAt = Math.max(failingSince + policy.failingForMs, noticedAt + policy.noticeMs);
      const event = noticeOf(endpoint, endpointFailingEventType, disablesAt);
      if (claimed) {
        logNotice(
          event,
          endpoint.workspaceId,
          "every delivery to this endpoint has failed; it will be disabled",
        );
      }
      return notify(endpoint, event);
    },

    /** D35's disable: the subscription stops, says why, and the workspace and the operator are told. */
    async disableFailingEndpoint({
      subscriptionId,
      failingSince,
    }: EndpointAction): Promise<DeliveryTarget[]> {
      const before = await failing(subscriptionId, failingSince);
      if (!before) return [];
      const { failedDeliveries, lastFailure } = before.run;
      const reason =
        `every delivery since ${isoFromMs(failingSince)} failed (${failedDeliveries} failed deliveries); ` +
        `the last: ${lastFailure ?? "no error recorded"}`;
      const disabled = await deps.store.endpointHealth.disable(subscriptionId, failingSince, reason, clock());
      const subscription = await deps.store.notifications.get(subscriptionId);
      if (!subscription?.disabledAt) return [];
      const event = noticeOf(before, endpointDisabledEventType, subscription.disabledAt);
      if (disabled)
        logNotice(event, before.workspaceId, "every delivery to this endpoint failed; it was disabled");
      // D36: what its hold kept ends failed (subscription_disabled), as of the status read before that.
      const status = await deps.store.holds.status(subscriptionId);
      const ended = await deps.store.holds.abandon(subscriptionId, clock());
      const told = status ? await tellWorkspace(deps, status, subscriptionDisabledEventType, ended) : [];
      return [...(await notify(before, event)), ...told];
    },
  };
}

/**
 * Sends a D35 notice delivery. Notices go to e-mail subscriptions only (see notify above), so another
 * channel here means the subscription was changed since: the delivery fails, naming why.
 */
export async function sendEndpointNotice(
  deps: ActivityDeps,
  config: ChannelConfig,
  event: EndpointNoticeEvent,
): Promise<AttemptResult> {
  if (config.channel !== "email") {
    const error = `an endpoint notice goes to e-mail only; this subscription is now ${config.channel}`;
    return { outcome: "failed", error, responseSnippet: "" };
  }
  const { smtpUrl, mailFrom } = deps.notifications ?? { smtpUrl: undefined, mailFrom: "" };
  return sendEmailAttempt({
    smtpUrl,
    from: mailFrom,
    recipients: config.recipients,
    email: buildEndpointNoticeEmail(event),
    timeoutMs: deliveryTimeoutMs,
  });
}

/** One notice of each kind per run: the same id on every retry of the activity that makes it. */
function noticeEventIdOf(type: string, subscriptionId: string, failingSince: number): string {
  const key = `${type}:${subscriptionId}:${failingSince}`;
  return derivedId("evt", key);
}
