import {
  condition,
  continueAsNew,
  defineSignal,
  proxyActivities,
  setHandler,
  workflowInfo,
} from "@temporalio/workflow";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";
import { type EndpointWatch, endpointFailedSignal } from "../endpoint-health-ids.js";
import { deliverSeries } from "./deliver-notifications.js";

/** The store reads and writes retry until they land: a locked database must not cost a notice. */
const { planEndpointCheck, noticeFailingEndpoint, disableFailingEndpoint } = proxyActivities<Activities>({
  startToCloseTimeout: "1 minute",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute" },
});

const failed = defineSignal(endpointFailedSignal);

/** Checks per run before continuing as new: bounds the history of an endpoint that fails for weeks. */
const checksPerRun = 200;

/**
 * D35 by time as well as by outcome: sleeps on a durable timer until the notice or the disable of a
 * failing webhook or chat subscription is due, so an endpoint that gets no more traffic is still handled;
 * each failed delivery wakes it to look again at once. The notices to the workspace's e-mail
 * subscriptions are deliveries of this workflow, as a no-activity watcher's alerts are of it. Ends when the
 * run is over: a success, an enable, the disable itself, a deletion.
 */
export async function watchEndpointHealth(watch: EndpointWatch): Promise<void> {
  let woken = false;
  setHandler(failed, () => {
    woken = true;
  });
  for (let check = 0; check < checksPerRun && !workflowInfo().continueAsNewSuggested; check++) {
    // Cleared before the look, not after: a failure signalled while it reads is not slept through.
    woken = false;
    const plan = await planEndpointCheck(watch);
    if (plan.kind === "stop") return;
    if (plan.kind === "wait") {
      await condition(() => woken, plan.waitMs);
      continue;
    }
    const act = plan.kind === "notice" ? noticeFailingEndpoint : disableFailingEndpoint;
    const targets = await act({ ...watch, failingSince: plan.failingSince });
    await Promise.all(targets.map((target) => deliverSeries({ deliveryId: target.deliveryId, series: 1 })));
  }
  await continueAsNew<typeof watchEndpointHealth>(watch);
}
