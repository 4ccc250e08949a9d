import { ApplicationFailure, Context } from "@temporalio/activity";
import type { Client } from "@temporalio/client";
import { deliveryPolicy, retryDelayMs } from "../../domain/delivery-schedule.js";
import { completionEventType, receivesEventType } from "../../domain/event-types.js";
import { takeEndpointPace } from "../../limits/endpoint-pace.js";
import { computeLimits } from "../../limits/execution-limits.js";
import { defaultQuotas } from "../../limits/quotas.js";
import { WorkspaceSlots } from "../../limits/workspace-slots.js";
import { logger } from "../../logging/logger.js";
import { failSpan, inCarriedContext, inSpan, SpanKind, type TraceCarrier } from "../../logging/tracing.js";
import type { AlertFiredEvent, AlertResolvedEvent } from "../../notifications/alert-event.js";
import { alertOutcomeOf } from "../../notifications/alert-outcome.js";
import {
  type DeliveryFailedEvent,
  isDeliveryFailedEvent,
} from "../../notifications/delivery-failed-event.js";
import {
  buildAlertEmail,
  buildDeliveryFailedEmail,
  buildEmail,
  buildHoldNoticeEmail,
  sendEmailAttempt,
} from "../../notifications/email.js";
import { isEndpointNotice } from "../../notifications/endpoint-notice.js";
import {
  type AlertPayload,
  buildCompletionEvent,
  type CompletionEvent,
  type EventIncludes,
  logUrlOf,
} from "../../notifications/event.js";
import { type HoldNoticeEvent, isHoldNotice } from "../../notifications/hold-notice.js";
import { deliveryTimeoutMs, sendWebhookAttempt } from "../../notifications/http-channel.js";
import { sendSlackAttempt } from "../../notifications/slack.js";
import type { AttemptOutcome, DeliveryAttemptRecord, DeliveryWithEvent } from "../../store/delivery-rows.js";
import type { LogEntryRecord } from "../../store/records.js";
import type { SubscriptionForDelivery } from "../../store/subscriptions-store.js";
import { derivedId, newId } from "../../util/ids.js";
import { type DeliveryTarget, deliveryHeldFailure, deliveryTaskQueue } from "../delivery-ids.js";
import { watchFailingEndpoint } from "../start-endpoint-watch.js";
import { attemptSlotLimits } from "../worker-slots.js";
import { endpointPaced, startedAttempts, temporalRetryDelayMs, workspaceBusy } from "./block-admission.js";
import type { ActivityDeps } from "./deps.js";
import { sendEndpointNotice } from "./endpoint-health-activities.js";
import { heartbeating } from "./heartbeating.js";

/** One attempt series of one delivery (D19); a redelivery is series + 1 of the same delivery. */
export interface DeliveryInput {
  deliveryId: string;
  series: number;
  /** The Test RPC sends once (D18): no retry schedule. */
  once?: boolean;
  /** D50: the trace context of the execution notified (its span's), the attempts' parent. */
  traceContext?: TraceCarrier;
}

/** What an attempt came to, as the workflow and its history show it; the attempt row has the rest. */
export interface AttemptSummary {
  attempt: number;
  outcome: AttemptOutcome;
  httpStatus?: number | undefined;
  error?: string | undefined;
}

/** What every channel answers (http-channel, slack, email); the attempt log times the attempt itself (attemptStart). */
interface ChannelResult {
  outcome: "succeeded" | "retry" | "failed";
  httpStatus?: number;
  responseSnippet?: string;
  error?: string;
  retryAfterMs?: number;
}

/** Fan-out and delivery of notifications (issue 5, items 3, 4, 7): the side effects behind the workflows. */
export function deliveryActivities(deps: ActivityDeps, temporal: Client) {
  const policy = deliveryPolicy(deps.notifications?.delivery);
  const clock = deps.clock ?? Date.now;
  const quotas = deps.quotas ?? defaultQuotas;
  const slots = new WorkspaceSlots(
    "delivery attempts",
    attemptSlotLimits(quotas, quotas.workspace.concurrentDeliveries, "deliveries"),
  );

  /**
   * D35: a failure the store counted for a webhook or chat endpoint wakes (or starts) its watcher, which
   * notices and disables it when due. Its failure must not fail the delivery: the attempt is recorded and
   * sending it again would duplicate it. The next failure, or the watcher's own timer, catches up.
   */
  const watchFailure = async (delivery: { subscriptionId: string; workspaceId: string }) => {
    // Whichever queue the attempt runs on, the watcher runs on the deliveries' (issue 51).
    const taskQueue = deliveryTaskQueue(Context.current().info.taskQueue);
    await watchFailingEndpoint(temporal, delivery, taskQueue).catch((error: unknown) =>
      (deps.logger ?? logger).error(
        { err: error, subscriptionId: delivery.subscriptionId },
        "could not wake the endpoint watcher",
      ),
    );
  };

  /** The attempts recorded for the input's series, oldest first. */
  const seriesAttempts = async (input: DeliveryInput) =>
    (await deps.store.deliveries.attemptsOf(input.deliveryId)).filter((a) => a.series === input.series);

  /**
   * Ends a series whose last attempt was lost with its worker (a timeout, not an outcome): the delivery is
   * marked failed with that reason, so it never stays pending; a redelivery sends it again with the same
   * Idempotency-Key. An attempt that recorded its outcome before the worker died keeps it.
   */
  async function settleLost(input: DeliveryInput): Promise<"succeeded" | "failed"> {
    const { store } = deps;
    const delivery = await store.deliveries.get(input.deliveryId);
    if (delivery?.status !== "pending") return delivery?.status === "succeeded" ? "succeeded" : "failed";
    const recorded = await seriesAttempts(input);
    const now = clock();
    const counted = await store.deliveries.recordAttempt(
      {
        deliveryId: delivery.id,
        series: input.series,
        attempt: (recorded.at(-1)?.attempt ?? 0) + 1,
        startedAt: now,
        durationMs: 0,
        outcome: "failed",
        httpStatus: null,
        responseSnippet: null,
        error: "the worker running the last attempt was lost; the receiver may or may not have the event",
      },
      "failed",
    );
    if (counted) await watchFailure(delivery);
    const subscription = await store.notifications.getForDelivery(delivery.subscriptionId);
    deps.metrics?.deliveryAttempted(subscription?.config.channel ?? "deleted", "lost");
    return "failed";
  }

  return {
    /**
     * The deliveries of one log entry: one per matching subscription (D19), created once. The event id is
     * derived from the log id and its timestamp is the execution's end, so a retried or replayed fan-out
     * rebuilds the very same event and finds the rows it already made.
     */
    async prepareDeliveries({ logId }: { logId: string }): Promise<DeliveryTarget[]> {
      const { store } = deps;
      const entry = await store.logs.getEntry(logId);
      if (!entry) throw ApplicationFailure.nonRetryable(`no log entry ${logId}`, "LogEntryNotFound");
      const eventOf = await eventsOf(deps, entry);
      const createdAt = Date.now();
      const targets: DeliveryTarget[] = [];
      for (const subscription of await store.notifications.matching(entry.workspaceId, entry)) {
        // D21, D34: a subscription with an alert rule is notified when its rule fires or stops holding,
        // not on every execution.
        const outcome = subscription.alertRule
          ? await alertOutcomeOf(store, subscription, subscription.alertRule, entry, eventIdOf(entry.id))
          : undefined;
        if (outcome === null) continue;
        const event =
          outcome && "resolved" in outcome
            ? outcome.resolved
            : await eventOf(subscription.include, outcome?.fired);
        // D38: the rule's state moved all the same; only the event is not sent.
        if (!receivesEventType(subscription, event.type)) continue;
        const id = newId("dlv");
        const delivery = await store.deliveries.createOnce({
          id,
          eventId: event.id,
          eventType: event.type,
          subscriptionId: subscription.id,
          workspaceId: entry.workspaceId,
          logId,
          event,
          createdAt,
        });
        // Counted once: a retried preparation finds the delivery its first try made.
        if (outcome && subscription.alertRule && delivery.id === id) {
          deps.metrics?.alerted(subscription.alertRule.rule, "fired" in outcome ? "fired" : "resolved");
        }
        // D36: a delivery made while its endpoint is held waits for the drain; no series starts.
        if (delivery.status === "held") continue;
        targets.push({
          deliveryId: delivery.id,
          workspaceId: entry.workspaceId,
          workflowId: entry.workflowId,
          subscriptionId: subscription.id,
        });
      }
      return targets;
    },

    /** A series whose last attempt was lost after Temporal's own retries (before the slots below). */
    settleLostDelivery(input: DeliveryInput): Promise<"succeeded" | "failed"> {
      return settleLost(input);
    },

    /**
     * One attempt (D19): sends the stored event through the subscription's channel and records the attempt
     * with where the delivery now stands. A transient failure is thrown with the schedule's next delay as
     * `nextRetryDelay`, so the wait is a durable Temporal timer; a failure that no retry can mend, or the
     * last attempt, is thrown non-retryable.
     *
     * At most `concurrentDeliveries` attempts of one workspace run at once on a worker, so one tenant's slow
     * endpoints cannot hold every delivery slot (as D26 does for blocks): an attempt over it is refused at
     * once, frees its slot and waits in Temporal (block-admission.ts). Before that, a subscription with a
     * throttle (D38) takes its place in its endpoint's pace, shared by every worker: a place a moment away
     * is waited for here, a later one in Temporal (limits/endpoint-pace.ts). A refusal is no attempt, so the
     * attempt's number is not Temporal's: it is one more than the attempts started before, which each
     * attempt's heartbeat records and the attempt log floors. An attempt that started and was lost with its
     * worker counts; after the last, the next run settles the series as lost.
     *
     * D50: in the trace of the execution whose notification it is, which the input carries.
     */
    attemptDelivery(input: DeliveryInput): Promise<AttemptSummary> {
      return inCarriedContext(input.traceContext, async (): Promise<AttemptSummary> => {
        const { store } = deps;
        const context = Context.current();
        const delivery = await store.deliveries.get(input.deliveryId);
        if (!delivery)
          throw ApplicationFailure.nonRetryable(`no delivery ${input.deliveryId}`, "DeliveryNotFound");
        const recorded = (await seriesAttempts(input)).map((a) => a.attempt);
        const attempt = Math.max(startedAttempts(context) ?? 0, ...recorded) + 1;
        const maxAttempts = input.once ? 1 : policy.maxAttempts;
        if (attempt > maxAttempts) {
          const settled = await settleLost(input);
          if (settled === "succeeded") return { attempt: attempt - 1, outcome: "succeeded" };
          throw ApplicationFailure.nonRetryable(
            "the worker running the last attempt was lost; the receiver may or may not have the event",
            "DeliveryLost",
          );
        }
        const subscription = await store.notifications.getForDelivery(delivery.subscriptionId);
        // D36: held deliveries cost no attempts. The Test RPC's sample goes whatever the endpoint's state.
        const held =
          delivery.status === "held" ||
          (!input.once &&
            subscription !== undefined &&
            subscription.holdState !== "active" &&
            (await store.holds.holdPending(delivery.id, clock())));
        if (held) {
          deps.metrics?.deliveryHeld(subscription?.config.channel ?? "deleted");
          throw ApplicationFailure.create({
            message: "the endpoint is held (D36): the delivery waits for it to answer again",
            type: deliveryHeldFailure,
            nonRetryable: true,
          });
        }
        const throttle = subscription?.throttlePerSecond;
        if (throttle) {
          const place = await takeEndpointPace(store, delivery.subscriptionId, throttle);
          if (!place.allowed) throw endpointPaced(throttle, place.waitMs);
          // Not a heartbeat: this attempt has not started until it holds a slot (at most a second, well
          // within the heartbeat timeout).
          await context.sleep(place.waitMs);
        }
        // No await from here until the slot is held: concurrent attempts see each other's.
        const refused = slots.refusal(delivery.workspaceId);
        if (refused) throw workspaceBusy(refused);
        const started = attemptStart(clock);
        const beat = () => context.heartbeat({ started: attempt });
        beat();
        const { channel, result } = await slots.holding(delivery.workspaceId, () =>
          heartbeating(beat, () => sendDelivery(deps, delivery, subscription, attempt)),
        );
        const record = attemptRecord(
          delivery.id,
          input.series,
          attempt,
          started,
          result,
          attempt >= maxAttempts,
        );
        const { outcome } = record;
        const counted = await store.deliveries.recordAttempt(
          record,
          outcome === "retrying" ? "pending" : outcome,
          // D36: the last attempt of the schedule failed as a retryable one: the run of exhaustions grows.
          { exhausted: outcome === "failed" && result.outcome === "retry" },
        );
        if (counted) await watchFailure(delivery);
        deps.metrics?.deliveryAttempted(channel, outcome);
        const summary = { attempt, outcome, httpStatus: result.httpStatus, error: result.error };
        if (outcome === "succeeded") return summary;
        const message = result.error ?? "the delivery attempt failed";
        if (outcome === "failed")
          throw ApplicationFailure.create({
            message,
            type: "DeliveryFailed",
            nonRetryable: true,
            details: [summary],
          });
        throw ApplicationFailure.create({
          message,
          type: "DeliveryRetrying",
          details: [summary],
          nextRetryDelay: temporalRetryDelayMs(
            retryDelayMs(attempt, { retryAfterMs: result.retryAfterMs, scale: policy.delayScale }),
          ),
        });
      });
    },
  };
}

/** D19: the event id follows from the log entry, so the same execution can never make a second event. */
export function eventIdOf(logId: string): string {
  return derivedId("evt", `event:${logId}`);
}

/**
 * The event of one log entry for each set of include flags and alert, built once per set: subscriptions
 * that ask for the same parts share one event. The limits are read once, and only when some subscription
 * wants them.
 */
async function eventsOf(
  deps: ActivityDeps,
  entry: LogEntryRecord,
): Promise<(include: EventIncludes, alert?: AlertPayload) => Promise<CompletionEvent>> {
  const built = new Map<string, CompletionEvent>();
  const user =
    entry.billedUserId === null ? undefined : await deps.store.accounts.getUser(entry.billedUserId);
  let limits: Awaited<ReturnType<typeof computeLimits>> | undefined;
  return async (include, alert) => {
    const key = JSON.stringify([include, alert]);
    const existing = built.get(key);
    if (existing) return existing;
    // An execution billed to nobody has no limits to show: its event carries neither part.
    const withLimits = user !== undefined && (include.rateLimits || include.usage);
    if (withLimits) limits ??= await computeLimits(deps.store, deps.planLimits, user, Date.now());
    const event = buildCompletionEvent({
      eventId: eventIdOf(entry.id),
      timestampMs: entry.endedAt,
      entry,
      include: withLimits ? include : { ...include, rateLimits: false, usage: false },
      ...(limits ? { limits } : {}),
      ...(alert ? { alert } : {}),
    });
    built.set(key, event);
    return event;
  };
}

/** When an attempt began: on the activities' clock for its record, and on the monotonic one for its length. */
export interface AttemptStart {
  at: number;
  mark: number;
}

export function attemptStart(clock: () => number): AttemptStart {
  return { at: clock(), mark: performance.now() };
}

/**
 * What an attempt of a delivery's series leaves in its record: a retryable failure that is not the
 * schedule's last is "retrying"; the last one, or one not to retry, "failed". Its duration runs from its
 * start to now, the event's rendering and signing included, not only the channel's exchange: started_at
 * plus duration_ms then covers the request the receiver saw.
 */
export function attemptRecord(
  deliveryId: string,
  series: number,
  attempt: number,
  started: AttemptStart,
  result: ChannelResult,
  last: boolean,
): DeliveryAttemptRecord {
  const outcome: AttemptOutcome =
    result.outcome === "succeeded"
      ? "succeeded"
      : result.outcome === "retry" && !last
        ? "retrying"
        : "failed";
  return {
    deliveryId,
    series,
    attempt,
    startedAt: started.at,
    durationMs: Math.ceil(performance.now() - started.mark),
    outcome,
    httpStatus: result.httpStatus ?? null,
    responseSnippet: result.responseSnippet ?? null,
    error: result.error ?? null,
  };
}

/**
 * Sends the delivery's event through its subscription's channel: webhook, e-mail or chat (D19, D20). The
 * one send of an attempt (numbered), a probe and a drain alike (D36). With tracing on it is the span
 * `delivery attempt` (D50), named by ids, the channel, the event's type and the outcome; a webhook's
 * and a chat's HTTP exchange is its child.
 */
export function sendDelivery(
  deps: ActivityDeps,
  delivery: DeliveryWithEvent,
  subscription: SubscriptionForDelivery | undefined,
  attempt?: number,
): Promise<{ channel: string; result: ChannelResult }> {
  const channel = subscription && subscription.deletedAt === null ? subscription.config.channel : "deleted";
  const attributes = {
    "flowlog.delivery.id": delivery.id,
    "flowlog.subscription.id": delivery.subscriptionId,
    "flowlog.workspace.id": delivery.workspaceId,
    "flowlog.delivery.channel": channel,
    "flowlog.event.type": delivery.eventType,
    ...(attempt === undefined ? {} : { "flowlog.delivery.attempt": attempt }),
  };
  // An e-mail's SMTP exchange has no span of its own: the attempt is the client of the mail server.
  const kind = channel === "email" ? SpanKind.CLIENT : SpanKind.INTERNAL;
  return inSpan("delivery attempt", { kind, attributes }, async (span) => {
    const result: ChannelResult =
      subscription && channel !== "deleted"
        ? await sendThrough(deps, delivery, subscription)
        : { outcome: "failed", error: "the subscription was deleted" };
    span?.setAttribute("flowlog.delivery.outcome", result.outcome);
    if (result.httpStatus !== undefined) span?.setAttribute("http.response.status_code", result.httpStatus);
    if (result.outcome !== "succeeded") failSpan(span, result.outcome);
    return { channel, result };
  });
}

async function sendThrough(
  deps: ActivityDeps,
  delivery: DeliveryWithEvent,
  subscription: SubscriptionForDelivery,
): Promise<ChannelResult> {
  if (isEndpointNotice(delivery.event)) return sendEndpointNotice(deps, subscription.config, delivery.event);
  const event = delivery.event as
    | CompletionEvent
    | AlertFiredEvent
    | AlertResolvedEvent
    | DeliveryFailedEvent
    | HoldNoticeEvent;
  const { allowPrivateNetworks } = deps;
  const replyLimitBytes = (deps.quotas ?? defaultQuotas).replyBytes.delivery;
  const { publicBaseUrl, smtpUrl, mailFrom } = deps.notifications ?? unconfigured;
  const { config } = subscription;
  switch (config.channel) {
    case "webhook":
      return sendWebhookAttempt({
        url: config.url,
        ...secretsOf(subscription, (deps.clock ?? Date.now)()),
        signatureScheme: config.signatureScheme,
        propagateTraceContext: config.propagateTraceContext,
        headers: subscription.headers,
        event,
        deliveryId: delivery.id,
        allowPrivateNetworks,
        replyLimitBytes,
        timeoutMs: deliveryTimeoutMs,
      });
    case "slack":
      return sendSlackAttempt({
        url: config.url,
        event,
        workflowName:
          isDeliveryFailedEvent(event) || isHoldNotice(event) ? "" : await workflowNameOf(deps, event),
        // An inactivity alert has no log entry of its own; its message links nothing.
        logUrl: event.type === completionEventType ? logUrlOf(publicBaseUrl, event) : publicBaseUrl,
        allowPrivateNetworks,
        replyLimitBytes,
        timeoutMs: deliveryTimeoutMs,
      });
    case "email":
      return sendEmailAttempt({
        smtpUrl,
        from: mailFrom,
        recipients: config.recipients,
        email: isDeliveryFailedEvent(event)
          ? buildDeliveryFailedEmail(event)
          : isHoldNotice(event)
            ? buildHoldNoticeEmail(event)
            : event.type === completionEventType
              ? buildEmail(event, {
                  workflowName: await workflowNameOf(deps, event),
                  publicBaseUrl,
                  ...(event.data.alert ? { alertReason: event.data.alert.reason } : {}),
                })
              : buildAlertEmail(event),
        timeoutMs: deliveryTimeoutMs,
      });
  }
}

/** A worker given no notification settings: relative links, and e-mail answers that it is not configured. */
const unconfigured = { publicBaseUrl: "", smtpUrl: undefined, mailFrom: "" };

/**
 * The secrets this attempt is signed with. D33: the replaced one signs too while its grace period lasts,
 * judged now, at the attempt, so a retry after the expiry carries the new signature only. The secrets,
 * like the webhook's headers (D38), are read from the store here, in the activity, so they never enter a
 * workflow's history (D24).
 */
function secretsOf(
  subscription: SubscriptionForDelivery,
  now: number,
): { secret?: string; previousSecret?: string } {
  const { secret, previousSecret, previousSecretExpiresAt } = subscription;
  if (secret === null) return {};
  const inGrace =
    previousSecret !== null && previousSecretExpiresAt !== null && now < previousSecretExpiresAt;
  return inGrace ? { secret, previousSecret } : { secret };
}

/** E-mail subjects and chat titles name the workflow (D20); a sample event's workflow has no row. */
async function workflowNameOf(deps: ActivityDeps, event: { data: { workflowId: string } }): Promise<string> {
  return (await deps.store.workflows.getWorkflow(event.data.workflowId))?.name ?? event.data.workflowId;
}
