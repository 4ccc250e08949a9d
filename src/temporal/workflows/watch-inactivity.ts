import {
  condition,
  continueAsNew,
  defineSignal,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from "@temporalio/workflow";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";
import { deliveryTaskQueue } from "../delivery-ids.js";
import { type InactivityWatch, recheckInactivitySignal } from "../inactivity-ids.js";
import { flowlogSearchAttributes } from "../search-attributes.js";
import { deliveriesAsActivities, deliverSeries, startLegacyDelivery } from "./deliver-notifications.js";

/** The store reads and writes retry until they land: a locked database must not cost an alert. */
const { planInactivityCheck, fireInactivityAlert } = proxyActivities<Activities>({
  startToCloseTimeout: "1 minute",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute" },
});

const recheck = defineSignal(recheckInactivitySignal);

/** Checks per run before continuing as new: bounds the history of a watcher that lives for years. */
const checksPerRun = 200;

/**
 * Issue 51: watchers run on the deliveries' queue. One started before on the executions' queue goes on
 * there as a new run at its next look; a history written before this replays as it was.
 */
const watchersOnDeliveryQueue = "watchers-on-delivery-queue";

/**
 * D21 `no_activity(X)`: evaluated by time, not on execution. Sleeps on a durable Temporal timer until X
 * hours after the workflow's last execution (or the end of the cooldown), which survives worker and server
 * restarts, then looks again: an execution in the meantime pushes the due time on; silence fires one
 * `workflow.alert.fired` delivery per cooldown, which it makes itself (an activity series, as a fan-out
 * does). Ends when the subscription no longer watches the workflow.
 */
export async function watchInactivity(watch: InactivityWatch): Promise<void> {
  let woken = false;
  const delivered: string[] = [];
  setHandler(recheck, () => {
    woken = true;
  });
  const deliveryQueue = deliveryTaskQueue(workflowInfo().taskQueue);
  for (let check = 0; check < checksPerRun && !workflowInfo().continueAsNewSuggested; check++) {
    if (workflowInfo().taskQueue !== deliveryQueue && patched(watchersOnDeliveryQueue)) {
      await makeContinueAsNewFunc<typeof watchInactivity>({ taskQueue: deliveryQueue })(watch);
    }
    const plan = await planInactivityCheck(watch);
    if (plan.kind === "stop") return;
    if (plan.waitMs > 0) {
      woken = false;
      await condition(() => woken, plan.waitMs);
      continue;
    }
    const target = await fireInactivityAlert({ ...watch, dueAt: plan.dueAt });
    if (!target) continue;
    if (!patched(deliveriesAsActivities)) {
      await startLegacyDelivery(target, 1);
      continue;
    }
    // The alert's delivery is an activity of this watcher, on the deliveries' task queue (issue 12),
    // named as it was when the watcher itself ran on the executions' queue.
    delivered.push(target.deliveryId);
    upsertSearchAttributes([{ key: flowlogSearchAttributes.deliveryIds, value: [...delivered] }]);
    await deliverSeries({ deliveryId: target.deliveryId, series: 1 }, deliveryQueue);
  }
  await continueAsNew<typeof watchInactivity>(watch);
}
