import { Context } from "@temporalio/activity";
import type { Client } from "@temporalio/client";
import type { FanOutOutbox } from "../fan-out-outbox.js";
import { blockActivities } from "./block-activities.js";
import { bulkActivities } from "./bulk-activities.js";
import { bulkCancelActivities } from "./bulk-cancel-activities.js";
import { deliveryActivities } from "./delivery-activities.js";
import { deliveryFailedActivities } from "./delivery-failed-activities.js";
import type { ActivityDeps } from "./deps.js";
import { endpointHealthActivities } from "./endpoint-health-activities.js";
import { executionActivities } from "./execution-activities.js";
import { holdActivities } from "./hold-activities.js";
import { inactivityActivities } from "./inactivity-activities.js";
import { recoveryActivities } from "./recovery-activities.js";
import { retentionActivities } from "./retention-activities.js";

export type { ActivityDeps };

/**
 * Every side effect of our workflows lives in an activity (style: workflows hold only deterministic
 * orchestration). The worker registers everything this returns; workflows import `Activities` as a type.
 * `temporal` is the worker's own client, for the workflows an activity starts; `fanOuts` starts the
 * notifications that log writes leave in the outbox; `stopping` is aborted when the worker's first tries of
 * HTTP blocks must hand over to another worker (block-activities.ts).
 */
export function createActivities(
  deps: ActivityDeps,
  temporal: Client,
  fanOuts: Pick<FanOutOutbox, "wake">,
  stopping: AbortSignal = new AbortController().signal,
) {
  return {
    greetFromWorker,
    ...executionActivities(deps, fanOuts),
    ...blockActivities(deps, stopping),
    ...deliveryActivities(deps, temporal),
    ...deliveryFailedActivities(deps, temporal),
    ...recoveryActivities(deps, temporal),
    ...bulkActivities(deps, temporal),
    ...bulkCancelActivities(deps, temporal),
    ...endpointHealthActivities(deps),
    ...holdActivities(deps),
    ...inactivityActivities(deps),
    ...retentionActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;

/** Proves a real worker ran it: names the worker's process and the task queue it polled. */
async function greetFromWorker(name: string): Promise<string> {
  return `Hello, ${name}, from worker process ${process.pid} on task queue ${Context.current().info.taskQueue}`;
}
