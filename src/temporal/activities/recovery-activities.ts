import { type Client, WorkflowNotFoundError } from "@temporalio/client";
import { maxDeliverySeries } from "../../limits/delivery-limits.js";
import type { DeliveryKey } from "../../store/delivery-rows.js";
import { redeliveryWorkflowId } from "../delivery-ids.js";
import type { RecoveryScope, RecoveryStop } from "../recovery-ids.js";
import type { ActivityDeps } from "./deps.js";

/** A page of a recovery job (D37): the next failed deliveries, or why the job must stop. */
export type RecoveryPage = { deliveries: DeliveryKey[] } | { stop: RecoveryStop };

/** Where a delivery the job reached stands: the series it is sent again as, or skipped. */
export type RecoveryReopening = { series: number } | { skipped: "not_failed" | "series_limit" };

/**
 * The store's side of a recovery job (D37): it reads the subscription's failed deliveries a page at a
 * time, oldest first, and opens a new series of each just before the job sends it. The sending is the
 * delivery activity's, as for any series (delivery-activities.ts), with its throttle and slots.
 */
export function recoveryActivities(deps: ActivityDeps, temporal: Client) {
  const clock = deps.clock ?? Date.now;
  const redeliveryStarted = async (deliveryId: string, series: number) => {
    try {
      await temporal.workflow.getHandle(redeliveryWorkflowId(deliveryId, series)).describe();
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  };
  return {
    /**
     * The failed deliveries of the window after `after`. A subscription disabled or deleted since the job
     * started stops it: what it would send could not be, or should not be, sent.
     */
    async recoveryPage(request: {
      scope: RecoveryScope;
      after?: DeliveryKey | undefined;
      limit: number;
    }): Promise<RecoveryPage> {
      const { store } = deps;
      const subscription = await store.notifications.get(request.scope.subscriptionId);
      if (!subscription) return { stop: "subscription_deleted" };
      if (!subscription.active) return { stop: "subscription_disabled" };
      return { deliveries: await store.deliveries.failedPage(request.scope, request.after, request.limit) };
    },

    /**
     * Opens the next series of each delivery, in the order given (one store write each), a few at a
     * time as the job has room for them: see reopenOne.
     */
    async reopenForRecovery({ deliveryIds }: { deliveryIds: string[] }): Promise<RecoveryReopening[]> {
      const reopened: RecoveryReopening[] = [];
      for (const deliveryId of deliveryIds) reopened.push(await reopenOne(deliveryId));
      return reopened;
    },
  };

  /**
   * Opens the delivery's next series if it is still failed: one a redelivery has since sent, or is
   * sending, is skipped, and so is one at its last series (D40), counted as skipped rather than dropped.
   * A pending delivery whose last series ended failed is taken for one this reopened before its worker
   * died unrecorded (a local activity runs again then): it gets the series that reopening opened, so it
   * is never left pending. A Redeliver of that series is told apart by its workflow; anything else that
   * opened it a moment ago and has not tried it yet is not, and then the receiver gets the event twice,
   * under its one Idempotency-Key, rather than never.
   */
  async function reopenOne(deliveryId: string): Promise<RecoveryReopening> {
    const { store } = deps;
    const delivery = await store.deliveries.get(deliveryId);
    if (delivery?.status === "pending") {
      const [last] = await store.deliveries.newestAttempts(deliveryId, 1);
      if (last?.outcome !== "failed") return { skipped: "not_failed" };
      const series = last.series + 1;
      return (await redeliveryStarted(deliveryId, series)) ? { skipped: "not_failed" } : { series };
    }
    if (delivery?.status !== "failed") return { skipped: "not_failed" };
    const reopened = await store.deliveries.reopen(deliveryId, clock(), maxDeliverySeries);
    if (reopened && "series" in reopened) return { series: reopened.series };
    return { skipped: reopened?.refused === "series_limit" ? "series_limit" : "not_failed" };
  }
}
