import { Context } from "@temporalio/activity";
import { deliveryPolicy, retryDelayMs } from "../../domain/delivery-schedule.js";
import { defaultHoldBounds, probeWaitMs } from "../../domain/hold-policy.js";
import { takeEndpointPace } from "../../limits/endpoint-pace.js";
import { logger } from "../../logging/logger.js";
import type { HoldNoticeType } from "../../notifications/hold-notice.js";
import type { DeliveryWithEvent, RecordedAttempt } from "../../store/delivery-rows.js";
import type { HeldDelivery, HoldStatus } from "../../store/hold-rows.js";
import type { SubscriptionForDelivery } from "../../store/subscriptions-store.js";
import type { DeliveryTarget } from "../delivery-ids.js";
import type { EndpointWatch } from "../endpoint-health-ids.js";
import { attemptRecord, attemptStart, sendDelivery } from "./delivery-activities.js";
import type { ActivityDeps } from "./deps.js";
import { heartbeating } from "./heartbeating.js";
import { tellWorkspace } from "./hold-notices.js";

/** A hold the watcher acts on: the one that began at `heldAt`; a later hold is another. */
export type HoldWatch = EndpointWatch & { heldAt: number };

/**
 * What the endpoint watcher does about a hold (D36): nothing (none, or it just ended with the
 * subscription's disable), probe after `waitMs`, or drain.
 */
export type HoldPlan =
  | { kind: "none" }
  | { kind: "probe"; heldAt: number; waitMs: number }
  | { kind: "drain"; heldAt: number };

/** How a probe came out: released (a 2xx), failed (retryable), idle (nothing held to probe with), or over. */
export type ProbeOutcome = "released" | "failed" | "idle" | "over";

/** How a drain's run ended: released (nothing left), held again, more to send, or over (not draining). */
export type DrainOutcome = "released" | "held" | "more" | "over";

/** A drain's run returns after this long, so its activity and history stay bounded; the next run resumes. */
const drainRunMs = 60_000;
/** Held deliveries read per query, and attempts written per transaction at most (D36: batched writes). */
const drainPage = 200;
/** How often a drain looks again whether its subscription is still enabled. */
const drainCheckEveryMs = 1_000;

/**
 * Whether the hold begun at `heldAt` still stands for an enabled subscription. A probe or a drain of a
 * subscription its owner has disabled or deleted since sends nothing more (the watcher planned it before);
 * the watcher's next plan ends the hold, its deliveries failed with subscription_disabled.
 */
const stillWatched = (status: HoldStatus, heldAt: number) =>
  status.heldAt === heldAt && status.active && !status.deleted;
const recordBatch = 200;
const recordEveryMs = 1_000;

/**
 * The side effects of D36's hold and drain, run by the endpoint watcher (watch-endpoint-health.ts): its
 * plan, the probe, the drain, and the notices of holding and releasing. The count that holds an endpoint
 * is the store's, kept as each delivery settles.
 */
export function holdActivities(deps: ActivityDeps) {
  const policy = deliveryPolicy(deps.notifications?.delivery);
  const bounds = deps.notifications?.hold ?? defaultHoldBounds;
  const clock = deps.clock ?? Date.now;
  const log = (deps.logger ?? logger).child({ component: "hold" });
  const { store } = deps;

  /** The held delivery with its event, as an attempt sends it. */
  const loaded = async (held: HeldDelivery) => {
    const delivery = await store.deliveries.get(held.id);
    if (!delivery) throw new Error(`held delivery ${held.id} vanished`);
    return delivery;
  };

  /** One send of `delivery`, as attempt `attempt` of `series`; its caller heartbeats. */
  const sendOnce = async (
    delivery: DeliveryWithEvent,
    subscription: SubscriptionForDelivery | undefined,
    series: number,
    attempt: number,
    last: boolean,
  ) => {
    const started = attemptStart(clock);
    const { channel, result } = await sendDelivery(deps, delivery, subscription);
    const record = attemptRecord(delivery.id, series, attempt, started, result, last);
    deps.metrics?.deliveryAttempted(channel, record.outcome);
    return { record, result };
  };

  return {
    /**
     * Where the subscription's hold stands, its bounds applied first (D36: past 10,000 or 7 days the oldest
     * end failed, hold_limit). A hold of a subscription since disabled or deleted ends, its held deliveries
     * failed with reason subscription_disabled.
     */
    async planHold({ subscriptionId, probes }: EndpointWatch & { probes: number }): Promise<HoldPlan> {
      const status = await store.holds.status(subscriptionId);
      if (!status || status.state === "active" || status.heldAt === null) return { kind: "none" };
      if (!status.active || status.deleted) {
        const ended = await store.holds.abandon(subscriptionId, clock());
        log.warn({ subscriptionId, ended }, "the held endpoint was disabled; its held deliveries failed");
        return { kind: "none" };
      }
      const trimmed = await store.holds.trim(subscriptionId, bounds, clock());
      if (trimmed > 0) log.warn({ subscriptionId, trimmed }, "held deliveries past the hold's bounds failed");
      if (status.state === "draining") return { kind: "drain", heldAt: status.heldAt };
      return { kind: "probe", heldAt: status.heldAt, waitMs: probeWaitMs(probes, policy.delayScale) };
    },

    /** D36, D38: the hold or its release, told once per hold to the workspace. */
    async tellHold({
      subscriptionId,
      heldAt,
      type,
    }: HoldWatch & { type: HoldNoticeType }): Promise<DeliveryTarget[]> {
      const status = await store.holds.status(subscriptionId);
      if (status?.heldAt !== heldAt) return [];
      return tellWorkspace(deps, status, type, await store.holds.heldCount(subscriptionId));
    },

    /**
     * One attempt of the oldest held delivery (D36). A 2xx delivers it and releases the endpoint; a 4xx is
     * the receiver's answer about that one delivery, which ends failed, and the next oldest is tried at
     * once; a retryable failure leaves it held and counts in D35's run, so an endpoint that stays down is
     * still disabled after days. The probe's attempts of a delivery form one series of its log.
     */
    async probeHeldEndpoint({ subscriptionId, heldAt }: HoldWatch): Promise<ProbeOutcome> {
      for (;;) {
        const status = await store.holds.status(subscriptionId);
        if (status?.state !== "held" || !stillWatched(status, heldAt)) return "over";
        const [oldest] = await store.holds.oldestHeld(subscriptionId, 1);
        if (!oldest) return "idle";
        const delivery = await loaded(oldest);
        const subscription = await store.notifications.getForDelivery(subscriptionId);
        const continues = oldest.lastAttemptAt !== null && oldest.lastAttemptAt >= heldAt;
        const series = continues ? oldest.lastSeries : oldest.lastSeries + 1;
        const attempt = continues ? oldest.lastAttempt + 1 : 1;
        const context = Context.current();
        const { record, result } = await heartbeating(
          () => context.heartbeat({ deliveryId: delivery.id }),
          () => sendOnce(delivery, subscription, series, attempt, false),
        );
        if (result.outcome === "succeeded") {
          await store.deliveries.recordAttempt(record, "succeeded");
          await store.holds.release(subscriptionId);
          return "released";
        }
        if (result.outcome === "failed") {
          await store.deliveries.recordAttempt(record, "failed");
          continue;
        }
        await store.deliveries.recordAttempt(record, "held");
        await store.endpointHealth.probeFailed(subscriptionId, clock(), record.error);
        return "failed";
      }
    },

    /**
     * Sends the held deliveries oldest first by event time, one at a time so they arrive in order, at the
     * subscription's throttle (D38), each as a new series with a fresh D19 schedule: a retryable failure is
     * retried after the schedule's wait before the next one is sent. Attempts are written in batches; a
     * worker lost in between leaves its unwritten ones held, and the next run sends them again under the
     * same delivery id and Idempotency-Key. Three exhaustions in a row hold the endpoint again. Runs for
     * about a minute, then returns "more" for the watcher to run it again.
     */
    async drainHeldDeliveries(watch: HoldWatch): Promise<DrainOutcome> {
      const context = Context.current();
      const sent = { succeeded: 0, failed: 0 };
      // One heartbeat timer for the whole run, not one per send: a drain sends hundreds a second.
      return heartbeating(
        () => context.heartbeat(sent),
        () => drainRun(context, watch, sent),
      );
    },
  };

  async function drainRun(
    context: Context,
    { subscriptionId, heldAt }: HoldWatch,
    sent: { succeeded: number; failed: number },
  ): Promise<DrainOutcome> {
    const deadline = Date.now() + drainRunMs;
    const subscription = await store.notifications.getForDelivery(subscriptionId);
    const throttle = subscription?.throttlePerSecond;
    const records: RecordedAttempt[] = [];
    let writtenAt = Date.now();
    const write = async () => {
      if (records.length > 0) await store.deliveries.recordAttempts(records.splice(0));
      writtenAt = Date.now();
    };
    const ended = async (outcome: DrainOutcome) => {
      await write();
      deps.metrics?.drainRan(outcome, sent);
      return outcome;
    };
    const paced = async () => {
      if (!throttle) return;
      for (;;) {
        const place = await takeEndpointPace(store, subscriptionId, throttle);
        await context.sleep(place.waitMs);
        if (place.allowed) return;
      }
    };
    let checkedAt = Date.now();
    for (;;) {
      const status = await store.holds.status(subscriptionId);
      if (!status || !stillWatched(status, heldAt)) return ended("over");
      if (status.state !== "draining") return ended(status.state === "held" ? "held" : "over");
      checkedAt = Date.now();
      const page = await store.holds.oldestHeld(subscriptionId, drainPage);
      if (page.length === 0) {
        if (await store.holds.finishDrain(subscriptionId)) return ended("released");
        continue;
      }
      for (const held of page) {
        if (Date.now() > deadline) return ended("more");
        // An owner's disable or delete stops the drain within a second, not a page of sends later.
        if (Date.now() - checkedAt >= drainCheckEveryMs) {
          const now = await store.holds.status(subscriptionId);
          if (!now || !stillWatched(now, heldAt)) return ended("over");
          checkedAt = Date.now();
        }
        const delivery = await loaded(held);
        const series = held.lastSeries + 1;
        for (let attempt = 1; ; attempt++) {
          await paced();
          const last = attempt >= policy.maxAttempts;
          const { record, result } = await sendOnce(delivery, subscription, series, attempt, last);
          if (record.outcome !== "retrying") {
            const exhausted = record.outcome === "failed" && result.outcome === "retry";
            records.push({ attempt: record, status: record.outcome, exhausted, drained: true });
            sent[record.outcome === "succeeded" ? "succeeded" : "failed"]++;
            if (exhausted) {
              await write();
              if ((await store.holds.status(subscriptionId))?.state === "held") return ended("held");
            }
            break;
          }
          // Written before the wait: a worker lost in it leaves the delivery held, sent again next run.
          records.push({ attempt: record, status: "held", drained: true });
          await write();
          const wait = retryDelayMs(attempt, {
            retryAfterMs: result.retryAfterMs,
            scale: policy.delayScale,
          });
          await context.sleep(wait);
        }
        if (records.length >= recordBatch || Date.now() - writtenAt >= recordEveryMs) await write();
      }
      await write();
    }
  }
}
