import { proxyActivities } from "@temporalio/workflow";
// Types only: activity code never enters the deterministic workflow bundle.
import type * as activities from "../activities/index.js";

const { greetFromWorker } = proxyActivities<typeof activities>({ startToCloseTimeout: "10 seconds" });

/** The smallest round trip through client, server, worker and activity (issue 2, item 7). */
export async function workerRoundTrip(name: string): Promise<string> {
  return await greetFromWorker(name);
}
