import { WorkflowExecutionAlreadyStartedError } from "@temporalio/common";
import {
  ActivityFailure,
  ApplicationFailure,
  ParentClosePolicy,
  proxyActivities,
  startChild,
} from "@temporalio/workflow";
import { maxAttemptsCeiling, retryDelaysMs } from "../../domain/delivery-schedule.js";
import type { DeliveryInput } from "../activities/delivery-activities.js";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";
import { type DeliveryTarget, deliverySearchAttributes, deliveryWorkflowId } from "../delivery-ids.js";

/** How a delivery's series ended; the attempts themselves are in the delivery log. */
export interface DeliveryResult {
  deliveryId: string;
  series: number;
  status: "succeeded" | "failed";
}

/**
 * The store write of the fan-out retries until it lands: an execution's notifications must not be lost to
 * a briefly locked database.
 */
const { prepareDeliveries } = proxyActivities<Activities>({
  startToCloseTimeout: "1 minute",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute" },
});

/**
 * Notifications of one log entry (issue 5, item 3), started by the activity that writes the entry (see
 * start-fan-out.ts) so that nothing here delays the execution's result (D19: never in its critical path).
 * One delivery per matching subscription, each run by its own workflow: a slow receiver holds up only its
 * own delivery.
 */
export async function fanOutNotifications({ logId }: { logId: string }): Promise<number> {
  const targets = await prepareDeliveries({ logId });
  await Promise.all(targets.map((target) => startDelivery(target, 1)));
  return targets.length;
}

/**
 * Starts one series of a delivery, unless a replayed fan-out already did (the id names the series). The
 * no-activity watcher starts its alerts' deliveries through it too.
 */
export async function startDelivery(target: DeliveryTarget, series: number): Promise<void> {
  try {
    await startChild(deliverNotification, {
      workflowId: deliveryWorkflowId(target.deliveryId, series),
      args: [{ deliveryId: target.deliveryId, series }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      // Once per id, even after the first has closed: a second start would send the notification again.
      workflowIdReusePolicy: "REJECT_DUPLICATE",
      typedSearchAttributes: deliverySearchAttributes(target),
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/**
 * One attempt series of a delivery (D19) as Temporal activity retries: each attempt is one activity run
 * that records itself, and the schedule's waits (5 s, 15 s, 1 min, 3 min, plus jitter) are the
 * `nextRetryDelay` each transient failure carries, so they are durable timers that outlive any worker. The
 * activity decides when a series ends (the operator's attempt limit); the policy here only bounds what
 * it cannot report, such as a worker lost mid-attempt.
 */
export async function deliverNotification(input: DeliveryInput): Promise<DeliveryResult> {
  const { attemptDelivery } = proxyActivities<Activities>({
    // The exchange itself is bounded at 30 s (D19); SMTP dialogues and a slow store get the rest.
    startToCloseTimeout: "1 minute",
    retry: {
      maximumAttempts: input.once ? 1 : maxAttemptsCeiling,
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
    if (!(error instanceof ActivityFailure && error.cause instanceof ApplicationFailure)) throw error;
    return { ...result, status: "failed" };
  }
}
