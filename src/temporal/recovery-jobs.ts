import type { Client } from "@temporalio/client";
import { deliverySearchAttributes, deliveryTaskQueue } from "./delivery-ids.js";
import { type NumberedJob, numberedJobs } from "./numbered-jobs.js";
import {
  cancelRecoverySignal,
  type RecoveryInput,
  type RecoveryState,
  recoveryNumberOf,
  recoveryProgressQuery,
  recoveryWorkflowId,
} from "./recovery-ids.js";
import { flowlogSearchAttributes } from "./search-attributes.js";
// A type only: the API server never loads workflow code.
import type { recoverDeliveries } from "./workflows/index.js";
import { workspacePriority } from "./workspace-priority.js";

/** A subscription's recovery job, as Temporal described it (D37). */
export type RecoveryJob = NumberedJob<typeof recoverDeliveries>;

/**
 * The recovery jobs of subscriptions (D37), numbered jobs (numbered-jobs.ts) whose owner is the
 * subscription: `recover-<subscriptionId>-<n>`, one running at a time, on the deliveries' queue.
 */
export function recoveryJobs(temporal: Client, executionTaskQueue: string) {
  const jobs = numberedJobs<typeof recoverDeliveries, RecoveryState>(temporal, {
    workflowType: "recoverDeliveries",
    workflowId: recoveryWorkflowId,
    numberOf: recoveryNumberOf,
    ownerQuery: (subscriptionId) => `${flowlogSearchAttributes.subscriptionId.name} = '${subscriptionId}'`,
    progressQuery: recoveryProgressQuery,
    cancelSignal: cancelRecoverySignal,
  });
  return {
    ...jobs,

    /** Starts the subscription's next job on the deliveries' queue, unless one runs (D37). */
    start: (input: RecoveryInput) =>
      jobs.start(input.subscriptionId, {
        taskQueue: deliveryTaskQueue(executionTaskQueue),
        args: [input],
        typedSearchAttributes: deliverySearchAttributes(input),
        priority: workspacePriority(input.workspaceId),
      }),
  };
}
