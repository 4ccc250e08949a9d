import type { Client } from "@temporalio/client";
import {
  type BulkCancelInput,
  type BulkJobState,
  type BulkKind,
  type BulkRetryInput,
  bulkJobNumberOf,
  bulkJobProgressQuery,
  bulkJobWorkflowId,
  cancelBulkJobSignal,
} from "./bulk-job-ids.js";
import { type NumberedJob, numberedJobs } from "./numbered-jobs.js";
import { flowlogSearchAttributes } from "./search-attributes.js";
// A type only: the API server never loads workflow code.
import type { bulkCancel, bulkRetry } from "./workflows/index.js";
import { workspacePriority } from "./workspace-priority.js";

type BulkWorkflow = typeof bulkRetry | typeof bulkCancel;

/** A bulk job as Temporal described it (D47). */
export type BulkJob = NumberedJob<BulkWorkflow>;

/** Each kind's workflow (workflows/bulk-retry.ts, workflows/bulk-cancel.ts). */
const workflowTypes: Record<BulkKind, string> = { retry: "bulkRetry", cancel: "bulkCancel" };

/**
 * A workspace's bulk jobs of a kind (D47), numbered jobs (numbered-jobs.ts) whose owner is the workspace:
 * `bulk-<kind>-<workspaceId>-<n>`, one of the kind running at a time. The Temporal UI finds them by
 * FlowlogWorkspaceId and shows what each was asked in its memo.
 */
export function bulkJobs(temporal: Client, kind: BulkKind) {
  const jobs = numberedJobs<BulkWorkflow, BulkJobState>(temporal, {
    workflowType: workflowTypes[kind],
    workflowId: (workspaceId, n) => bulkJobWorkflowId(kind, workspaceId, n),
    numberOf: (workspaceId, workflowId) => bulkJobNumberOf(kind, workspaceId, workflowId),
    ownerQuery: (workspaceId) => `${flowlogSearchAttributes.workspaceId.name} = '${workspaceId}'`,
    progressQuery: bulkJobProgressQuery,
    cancelSignal: cancelBulkJobSignal,
  });
  return {
    ...jobs,

    /** Starts the workspace's next job on the executions' queue, unless one runs. */
    start: (input: BulkRetryInput | BulkCancelInput, taskQueue: string, memo: Record<string, unknown>) =>
      jobs.start(input.workspaceId, {
        taskQueue,
        args: [input] as Parameters<BulkWorkflow>,
        typedSearchAttributes: [{ key: flowlogSearchAttributes.workspaceId, value: input.workspaceId }],
        memo,
        priority: workspacePriority(input.workspaceId),
      }),
  };
}
