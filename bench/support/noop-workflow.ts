import { proxyActivities } from "@temporalio/workflow";
import type { noopActivities } from "./noop-worker.js";

const { noop } = proxyActivities<typeof noopActivities>({ startToCloseTimeout: "30 seconds" });

/** The execution bench's baseline (issue 7, item 4): one activity that does nothing, and a result. */
export async function noopWorkflow(): Promise<string> {
  return noop();
}
