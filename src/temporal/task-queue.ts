import type { WorkerRole } from "../config/config.js";
import { deliveryTaskQueue } from "./delivery-ids.js";

/** The task queue the API server starts workflows on and the worker polls (D3: either may run alone). */
export const FLOWLOG_TASK_QUEUE = "flowlog";

/** The queue a role polls (issue 51): the executions' own, or the deliveries' named from it. */
export function roleTaskQueue(role: WorkerRole, executionTaskQueue: string): string {
  return role === "executions" ? executionTaskQueue : deliveryTaskQueue(executionTaskQueue);
}
