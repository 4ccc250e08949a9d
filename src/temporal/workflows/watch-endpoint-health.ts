import {
  condition,
  continueAsNew,
  defineSignal,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from "@temporalio/workflow";
// Types only: activity code never enters the deterministic workflow bundle.
import type { HoldPlan } from "../activities/hold-activities.js";
import type { Activities } from "../activities/index.js";
import type { DeliveryTarget } from "../delivery-ids.js";
import { type EndpointWatch, endpointFailedSignal } from "../endpoint-health-ids.js";
import { type DeliveryResult, deliverSeries } from "./deliver-notifications.js";

/** The store reads and writes retry until they land: a locked database must not cost a notice. */
const storeWork = {
  startToCloseTimeout: "1 minute",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute" },
} as const;
const { planEndpointCheck, noticeFailingEndpoint, disableFailingEndpoint, planHold, tellHold } =
  proxyActivities<Activities>(storeWork);

/**
 * D36's probe and drain send to the endpoint: they heartbeat, so one lost with its worker is retried
 * within seconds, and the drain resumes from the store. A drain's run lasts about a minute, plus the
 * schedule's waits of the delivery it is on (four at most, each capped at 10 minutes by D19).
 */
const { probeHeldEndpoint, drainHeldDeliveries } = proxyActivities<Activities>({
  startToCloseTimeout: "1 hour",
  heartbeatTimeout: "10 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute" },
});

const failed = defineSignal(endpointFailedSignal);

/** Checks per run before continuing as new: bounds the history of an endpoint that fails for weeks. */
const checksPerRun = 200;

/** D36 joined the watcher: a history written before it replays without the hold's steps. */
export const holdAndDrain = "hold-and-drain";

/**
 * D35 by time as well as by outcome: sleeps on a durable timer until the notice or the disable of a
 * failing webhook or chat subscription is due, so an endpoint that gets no more traffic is still handled;
 * each failed delivery wakes it to look again at once. The notices to the workspace's e-mail
 * subscriptions are deliveries of this workflow, as a no-activity watcher's alerts are of it. Ends when the
 * run is over: a success, an enable, the disable itself, a deletion.
 *
 * D36: while the endpoint is held it probes it on the hold's backoff, and once a probe gets through it
 * drains what waited; D35's notice and disable still come due meanwhile. The notices it sends are awaited
 * only before it ends or continues as new, so a notice's own retries never delay a probe.
 */
export async function watchEndpointHealth(watch: EndpointWatch & { probes?: number }): Promise<void> {
  let woken = false;
  setHandler(failed, () => {
    woken = true;
  });
  const notices: Promise<DeliveryResult>[] = [];
  const send = (targets: DeliveryTarget[]) =>
    notices.push(...targets.map((target) => deliverSeries({ deliveryId: target.deliveryId, series: 1 })));
  let probes = watch.probes ?? 0;
  const { subscriptionId } = watch;
  for (let check = 0; check < checksPerRun && !workflowInfo().continueAsNewSuggested; check++) {
    // Cleared before the look, not after: a failure signalled while it reads is not slept through.
    woken = false;
    const hold: HoldPlan = patched(holdAndDrain)
      ? await planHold({ subscriptionId, probes })
      : { kind: "none" };
    if (hold.kind !== "none") {
      const due = await planEndpointCheck(watch);
      if (due.kind === "notice" || due.kind === "disable") {
        const act = due.kind === "notice" ? noticeFailingEndpoint : disableFailingEndpoint;
        send(await act({ subscriptionId, failingSince: due.failingSince }));
        continue;
      }
      const at = { subscriptionId, heldAt: hold.heldAt };
      if (hold.kind === "drain") {
        await drainHeldDeliveries(at);
        continue;
      }
      if (probes === 0) send(await tellHold({ ...at, type: "subscription.held" }));
      await sleep(hold.waitMs);
      const probe = await probeHeldEndpoint(at);
      probes = probe === "released" ? 0 : probes + 1;
      if (probe === "released") send(await tellHold({ ...at, type: "subscription.released" }));
      continue;
    }
    probes = 0;
    const plan = await planEndpointCheck(watch);
    if (plan.kind === "stop") {
      await Promise.all(notices);
      return;
    }
    if (plan.kind === "wait") {
      await condition(() => woken, plan.waitMs);
      continue;
    }
    const act = plan.kind === "notice" ? noticeFailingEndpoint : disableFailingEndpoint;
    const targets = await act({ subscriptionId, failingSince: plan.failingSince });
    await Promise.all(targets.map((target) => deliverSeries({ deliveryId: target.deliveryId, series: 1 })));
  }
  await Promise.all(notices);
  await continueAsNew<typeof watchEndpointHealth>({ subscriptionId, probes });
}
