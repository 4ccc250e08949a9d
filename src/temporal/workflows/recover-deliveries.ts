import {
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  isCancellation,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from "@temporalio/workflow";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";
import {
  cancelRecoverySignal,
  type RecoveryCounts,
  type RecoveryInput,
  type RecoveryState,
  recoveryProgressQuery,
} from "../recovery-ids.js";
import { deliverSeries } from "./deliver-notifications.js";

/** Store reads and writes, retried until they land, as the fan-out's are (deliver-notifications.ts). */
const { recoveryPage, reopenForRecovery } = proxyLocalActivities<Activities>({
  startToCloseTimeout: "1 minute",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute" },
});

/** Deliveries read a page at a time: a few hundred keys, small in the history. */
const pageSize = 200;
/**
 * Series under way at once: as many attempts as D26 lets one workspace run at once on a worker. The
 * subscription's throttle (D38), when it has one, paces them further: a receiver just back from an outage
 * that wants fewer calls at once sets one.
 */
const seriesInFlight = 20;
/** Series a run starts before it continues as new: bounds the history of a job of 100,000 deliveries. */
const seriesPerRun = 1_000;

const cancel = defineSignal(cancelRecoverySignal);
const progress = defineQuery<RecoveryState>(recoveryProgressQuery);

/**
 * A subscription's recovery job (D37): sends its failed deliveries of a window again, oldest first, each
 * as a new series under its own delivery id and Idempotency-Key (D19's schedule, the throttle of D38 and
 * the slots of D26 all apply, in the delivery activity). The job's progress is its own state, answered
 * to the query while it runs and after it ends, and its result. CancelRecovery's signal, or a cancel
 * through Temporal, stops it starting series; the ones under way end first, so none is left pending.
 */
export async function recoverDeliveries(input: RecoveryInput): Promise<RecoveryState> {
  const counts: RecoveryCounts = { ...(input.carried?.counts ?? { succeeded: 0, failed: 0, skipped: 0 }) };
  const { carried, ...scope } = input;
  const state = (): RecoveryState => ({ ...scope, ...counts, status: "running" });
  let ended: RecoveryState | undefined;
  let cancelled = false;
  setHandler(progress, () => ended ?? state());
  setHandler(cancel, () => {
    cancelled = true;
  });

  let after = carried?.after;
  let inFlight = 0;
  let startedThisRun = 0;
  const done = () => counts.succeeded + counts.failed + counts.skipped;
  /**
   * Reopens the deliveries, then starts their series, in the order given, without waiting for them: the
   * series are scheduled in the order the deliveries were made. Neither is cancellable: a reopened
   * delivery is sent, and a series that has started runs to its end (D19), whatever becomes of the job.
   */
  const send = async (deliveryIds: string[]) => {
    const reopened = await CancellationScope.nonCancellable(() => reopenForRecovery({ deliveryIds }));
    reopened.forEach((reopening, index) => {
      if ("skipped" in reopening) {
        counts.skipped++;
        return;
      }
      inFlight++;
      const toSend = { deliveryId: deliveryIds[index] as string, series: reopening.series };
      void CancellationScope.nonCancellable(() => deliverSeries(toSend))
        .then(({ status }) => {
          // A series stopped by its endpoint's hold (D36) is the drain's to send.
          counts[status === "held" ? "skipped" : status]++;
        })
        .finally(() => {
          inFlight--;
        });
    });
  };
  const finish = (status: RecoveryState["status"], extra: Partial<RecoveryState> = {}) => {
    ended = { ...state(), status, endedAt: Date.now(), ...extra };
    return ended;
  };

  try {
    while (!cancelled && done() + inFlight < input.total) {
      if (startedThisRun >= seriesPerRun || workflowInfo().continueAsNewSuggested) {
        await condition(() => inFlight === 0);
        await continueAsNew<typeof recoverDeliveries>({ ...input, carried: { counts, after } });
      }
      const wanted = Math.min(pageSize, input.total - done() - inFlight);
      const page = await recoveryPage({ scope, after, limit: wanted });
      if ("stop" in page) {
        await condition(() => inFlight === 0);
        return finish("stopped", { stoppedReason: page.stop });
      }
      if (page.deliveries.length === 0) break;
      // As many at a time as there is room for: one store round trip reopens them all.
      for (let next = 0; next < page.deliveries.length; ) {
        await condition(() => cancelled || inFlight < seriesInFlight);
        if (cancelled) break;
        const batch = page.deliveries.slice(next, next + seriesInFlight - inFlight);
        next += batch.length;
        startedThisRun += batch.length;
        after = batch.at(-1);
        await send(batch.map((delivery) => delivery.id));
      }
    }
    await condition(() => inFlight === 0);
  } catch (error) {
    if (!isCancellation(error)) throw error;
    cancelled = true;
    await CancellationScope.nonCancellable(() => condition(() => inFlight === 0));
  }
  return finish(cancelled ? "cancelled" : "completed");
}
