import { proxyActivities } from "@temporalio/workflow";
import type { noopActivities } from "./noop-worker.js";

const { noop } = proxyActivities<typeof noopActivities>({ startToCloseTimeout: "30 seconds" });

/** The execution bench's baseline (issue 7, item 4): one activity that does nothing, and a result. */
export async function noopWorkflow(): Promise<string> {
  return noop();
}

/**
 * The least a notification can cost in Temporal as D19 shapes it: one workflow per event with one
 * activity per delivery, doing nothing (the delivery bench's floor rows).
 */
export async function noopFanOut(deliveries: number): Promise<number> {
  await Promise.all(Array.from({ length: deliveries }, () => noop()));
  return deliveries;
}
