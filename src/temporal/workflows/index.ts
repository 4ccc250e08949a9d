import { proxyActivities } from "@temporalio/workflow";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";

export { bulkCancel } from "./bulk-cancel.js";
export { bulkRetry } from "./bulk-retry.js";
export { deliverEvent, deliverNotification, fanOutNotifications } from "./deliver-notifications.js";
export { executeWorkflow } from "./execute-workflow.js";
export { purgeExpiredLogs } from "./purge-expired-logs.js";
export { recoverDeliveries } from "./recover-deliveries.js";
export { watchEndpointHealth } from "./watch-endpoint-health.js";
export { watchInactivity } from "./watch-inactivity.js";

const { greetFromWorker } = proxyActivities<Activities>({ startToCloseTimeout: "10 seconds" });

/** The smallest round trip through client, server, worker and activity (issue 2, item 7). */
export async function workerRoundTrip(name: string): Promise<string> {
  return await greetFromWorker(name);
}
