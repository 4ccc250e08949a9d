import { proxyActivities, proxyLocalActivities } from "@temporalio/workflow";
import type { noopActivities } from "./noop-worker.js";

const { noop, fetchJson, fetchAndLog } = proxyActivities<typeof noopActivities>({
  startToCloseTimeout: "30 seconds",
});

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

const local = proxyLocalActivities<typeof noopActivities>({ startToCloseTimeout: "30 seconds" });

/**
 * The least any notification workflow can cost, whatever runs its deliveries: its start and one workflow
 * task, the deliveries local activities doing nothing (the delivery bench's tighter floor rows).
 */
export async function noopLocalFanOut(deliveries: number): Promise<number> {
  await Promise.all(Array.from({ length: deliveries }, () => local.noop()));
  return deliveries;
}

/**
 * The least an api sync execution of the one-HTTP-block workflow can cost in Temporal (the execution
 * bench's floor rows): one activity that fetches `url`, and its answer as the result. No store, no
 * admission, no engine.
 */
export async function fetchWorkflow(url: string): Promise<unknown> {
  return { got: await fetchJson(url) };
}

/** `fetchWorkflow` whose one activity also writes the execution's log entry (the floor with the log). */
export async function fetchAndLogWorkflow(url: string): Promise<unknown> {
  return { got: await fetchAndLog(url) };
}
