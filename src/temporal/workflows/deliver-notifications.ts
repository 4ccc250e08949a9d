import { WorkflowExecutionAlreadyStartedError } from "@temporalio/common";
import {
  ActivityFailure,
  ApplicationFailure,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  startChild,
  upsertSearchAttributes,
} from "@temporalio/workflow";
import { retryDelaysMs } from "../../domain/delivery-schedule.js";
import { workspaceBusyFailure } from "../../engine/execution-types.js";
import type { DeliveryInput } from "../activities/delivery-activities.js";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";
import {
  type DeliveryTarget,
  deliveryHeldFailure,
  deliverySearchAttributes,
  fanOutSearchAttributes,
} from "../delivery-ids.js";

/** How a delivery's series ended; the attempts themselves are in the delivery log. */
export interface DeliveryResult {
  deliveryId: string;
  series: number;
  /** held: its endpoint was held before the attempt (D36); the drain sends it. */
  status: "succeeded" | "failed" | "held";
}

/**
 * The store writes retry until they land: an execution's notifications must not be lost to a briefly
 * locked database, nor a delivery left pending. They are short SQLite statements on the worker's own
 * connection, so they run as local activities, without a round trip through the server's task queues
 * (as the execution's own store work does); both are idempotent, so a replay that runs one again is safe.
 */
const storeRetry = { initialInterval: "1 second", maximumInterval: "1 minute" };
const { prepareDeliveries, settleLostDelivery, announceFailedDelivery } = proxyLocalActivities<Activities>({
  startToCloseTimeout: "1 minute",
  retry: storeRetry,
});
/** Before issue 12, the fan-out's store write was an activity; old histories replay it as one. */
const legacy = proxyActivities<Activities>({ startToCloseTimeout: "1 minute", retry: storeRetry });

/**
 * Issue 12: deliveries are activities of the workflow that makes them, not workflows of their own. A
 * history written before that (a fan-out or watcher in flight across the upgrade) replays the old way.
 */
export const deliveriesAsActivities = "deliveries-as-activities";

/** Issue 51: a series that ends failed is announced to the delivery.failed subscriptions (D38). */
export const deliveryFailedEvents = "delivery-failed-events";

export interface FanOutInput {
  logId: string;
  /**
   * The deliveries, made by the outbox's dispatcher before the start (issue 12), with their ids already
   * in the start's search attributes. Absent from a fan-out started before that: it makes them itself.
   */
  targets?: DeliveryTarget[];
  /** D50: the trace context of the execution's span, kept with the outbox's intent; its attempts' parent. */
  traceContext?: DeliveryInput["traceContext"];
}

/**
 * Notifications of one log entry (issue 5, item 3), started by the worker's outbox dispatcher after the
 * entry is written (fan-out-outbox.ts), so that nothing here delays the execution's result (D19: never in
 * its critical path). One delivery per matching subscription, each an attempt series of its own activity
 * (issue 12): a slow receiver holds up only its own delivery. Given its deliveries, the first workflow
 * task schedules them all and the last ends the workflow: nothing else runs in between.
 */
export async function fanOutNotifications({
  logId,
  targets: given,
  traceContext,
}: FanOutInput): Promise<number> {
  if (!patched(deliveriesAsActivities)) {
    const targets = await legacy.prepareDeliveries({ logId });
    await Promise.all(targets.map((target) => startLegacyDelivery(target, 1)));
    return targets.length;
  }
  let targets = given;
  if (targets === undefined) {
    targets = await prepareDeliveries({ logId });
    if (targets.length > 0) upsertSearchAttributes(fanOutSearchAttributes(targets));
  }
  // Only the activities' arguments change with the trace context, which a replay does not compare.
  const traced = traceContext ? { traceContext } : {};
  await Promise.all(
    targets.map((target) => deliverSeries({ deliveryId: target.deliveryId, series: 1, ...traced })),
  );
  return targets.length;
}

/** A redelivery or a test send (D18, D19): one attempt series, started by the API. */
export async function deliverNotification(input: DeliveryInput): Promise<DeliveryResult> {
  return deliverSeries(input);
}

/** The deliveries of one operational event (D38), made by the activity that raised it. */
export async function deliverEvent({ targets }: { targets: DeliveryTarget[] }): Promise<number> {
  await Promise.all(targets.map((target) => deliverSeries({ deliveryId: target.deliveryId, series: 1 })));
  return targets.length;
}

/**
 * One attempt series of a delivery (D19) as one activity and its retries: each attempt is a run that
 * records itself, and the schedule's waits (5 s, 15 s, 1 min, 3 min, plus jitter) are the `nextRetryDelay`
 * each transient failure carries, so they are durable timers that outlive any worker. The activity decides
 * when a series ends (the operator's attempt limit), a lost last attempt included, which it settles as
 * failed: a delivery never stays pending. The policy sets no maximum: a run refused while its workspace's
 * deliveries fill their slots on the worker is no attempt and must not use one up (delivery-activities.ts).
 * A series scheduled before that, with its maximum, is settled here when it runs out. A series that ends
 * failed, but a test send's, is told to the workspace's delivery.failed subscriptions (D38) before it
 * returns; their deliveries run in a workflow of their own.
 */
export async function deliverSeries(input: DeliveryInput, taskQueue?: string): Promise<DeliveryResult> {
  const { attemptDelivery } = proxyActivities<Activities>({
    activityId: input.deliveryId,
    ...(taskQueue === undefined ? {} : { taskQueue }),
    // The exchange itself is bounded at 30 s (D19); SMTP dialogues and a slow store get the rest. The
    // attempt heartbeats throughout, so one lost with its worker is retried (or settled) within seconds.
    startToCloseTimeout: "1 minute",
    heartbeatTimeout: "10 seconds",
    retry: {
      initialInterval: retryDelaysMs[0],
      backoffCoefficient: 3,
      maximumInterval: retryDelaysMs[retryDelaysMs.length - 1],
    },
  });
  const result = { deliveryId: input.deliveryId, series: input.series };
  try {
    await attemptDelivery(input);
    return { ...result, status: "succeeded" };
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    const lost = !(error.cause instanceof ApplicationFailure) || error.cause.type === workspaceBusyFailure;
    if (!lost && error.cause.type === deliveryHeldFailure) return { ...result, status: "held" };
    const status = lost ? await settleLostDelivery(input) : "failed";
    if (status === "failed" && !input.once && patched(deliveryFailedEvents))
      await announceFailedDelivery(input);
    return { ...result, status };
  }
}

/** Before issue 12: a delivery workflow per series. Kept for histories that replay it. */
export async function startLegacyDelivery(target: DeliveryTarget, series: number): Promise<void> {
  try {
    await startChild(deliverNotification, {
      workflowId: `delivery-${target.deliveryId}-${series}`,
      args: [{ deliveryId: target.deliveryId, series }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: "REJECT_DUPLICATE",
      typedSearchAttributes: deliverySearchAttributes(target),
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
