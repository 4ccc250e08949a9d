import type { Client } from "@temporalio/client";
import { deliverySearchAttributes } from "./delivery-ids.js";
import { type EndpointWatch, endpointFailedSignal, endpointWatchId } from "./endpoint-health-ids.js";
// A type only: activities never load workflow code.
import type { watchEndpointHealth } from "./workflows/index.js";
import { workspacePriority } from "./workspace-priority.js";

/**
 * D35: a delivery of a webhook or chat endpoint failed. Its watcher, a durable Temporal timer rather than
 * a polling loop, is signalled to look again now, and started if it is not running: signal-with-start on a
 * fixed id, so a thousand failures make one watcher.
 */
export async function watchFailingEndpoint(
  client: Client,
  target: EndpointWatch & { workspaceId: string },
  taskQueue: string,
): Promise<void> {
  await client.workflow.signalWithStart<typeof watchEndpointHealth, []>("watchEndpointHealth", {
    workflowId: endpointWatchId(target.subscriptionId),
    taskQueue,
    args: [{ subscriptionId: target.subscriptionId }],
    signal: endpointFailedSignal,
    signalArgs: [],
    typedSearchAttributes: deliverySearchAttributes(target),
    priority: workspacePriority(target.workspaceId),
  });
}
