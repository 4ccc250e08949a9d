import type { ServiceImpl } from "@connectrpc/connect";
import type {
  BulkCancelExecutionsRequest,
  WorkflowsService,
} from "../../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { type FieldViolation, invalidArgument, listLengthViolations } from "../../errors/api-errors.js";
import type { Store } from "../../store/store.js";
import {
  type BulkCancelInput,
  type BulkJobState,
  maxBulkExecutions,
  type RunningSelection,
} from "../../temporal/bulk-job-ids.js";
import { bulkJobs } from "../../temporal/bulk-jobs.js";
import { countRunningExecutions } from "../../temporal/running-executions.js";
import { FLOWLOG_TASK_QUEUE } from "../../temporal/task-queue.js";
import { callerOf } from "../caller.js";
import { isoDate } from "../logs/entry-filter.js";
import { setRestStatus } from "../rest-status.js";
import type { ExecutionDependencies } from "../triggers/executions.js";
import { requireMember } from "../workspace-access.js";
import { beyondLimit, bulkJobView, jobRunning } from "./bulk-job-answers.js";

/** The workflows a folder filter may stand for: each one a value of the visibility query. */
const maxFolderWorkflows = 1_000;

/**
 * D47: cancel in bulk. The running executions are counted in Temporal's visibility (running-executions.ts)
 * and the job (workflows/bulk-cancel.ts) is started here; GetBulkJob and CancelBulkJob (bulk-retry.ts)
 * read and stop it as they do a bulk retry.
 */
export function createBulkCancel(
  deps: ExecutionDependencies,
): Pick<ServiceImpl<typeof WorkflowsService>, "bulkCancelExecutions"> {
  const jobs = bulkJobs(deps.temporal, "cancel");
  return {
    async bulkCancelExecutions(request, context) {
      // Wall time, as Temporal's StartTime: executions started after the job are not its to cancel.
      const startedAt = Date.now();
      const caller = callerOf(context.values);
      await requireMember(deps.store, caller, request.workspaceId);
      const selection = await selectionOf(deps.store, request, deps.quotas.listParameterValues, startedAt);
      const executions = await countRunningExecutions(deps.temporal, selection);
      if (request.preview) return { executions };
      if (executions > maxBulkExecutions) throw beyondLimit(executions, "narrow them by workflow or by date");
      const reason = request.reason;
      const input: BulkCancelInput = {
        workspaceId: request.workspaceId,
        userId: caller.user.id,
        selection,
        reason,
        total: executions,
        startedAt,
      };
      const memo = { kind: "cancel", requestedBy: caller.user.id, selection, reason, total: executions };
      const start = await jobs.start(input, deps.taskQueue ?? FLOWLOG_TASK_QUEUE, memo);
      if ("running" in start) throw jobRunning("cancel", request.workspaceId, start.running);
      setRestStatus(context, 202);
      const state: BulkJobState = { ...input, kind: "cancel", status: "running", done: 0, failed: 0 };
      return { executions, job: bulkJobView(start.started, state) };
    },
  };
}

/**
 * The filters a running execution has (D47): its workflow, its trigger and its start. Folders stand for the
 * workflows in them now (an entry records its folder as it ends, a running execution has none), ANDed with
 * workflowIds as ListLogs does. The start is bounded by the job's: what starts later is not selected.
 */
async function selectionOf(
  store: Store,
  request: BulkCancelExecutionsRequest,
  maxListValues: number,
  startedAt: number,
): Promise<RunningSelection> {
  const violations: FieldViolation[] = [
    ...listLengthViolations("workflowIds", request.workflowIds, maxListValues),
    ...listLengthViolations("folderIds", request.folderIds, maxListValues),
    ...listLengthViolations("triggers", request.triggers, maxListValues),
  ];
  const fail = (field: string, message: string) => violations.push({ field, message });
  const startedFrom = isoDate(request.startDate, "startDate", fail);
  const endDate = isoDate(request.endDate, "endDate", fail);
  if (violations.length > 0) throw invalidArgument(violations);
  let workflowIds = request.workflowIds.length > 0 ? request.workflowIds : undefined;
  if (request.folderIds.length > 0) {
    const inFolders = new Set<string>();
    for (const folderId of request.folderIds) {
      for (const workflow of await store.workflows.listWorkflows(request.workspaceId, folderId)) {
        inFolders.add(workflow.id);
      }
    }
    workflowIds = workflowIds ? workflowIds.filter((id) => inFolders.has(id)) : [...inFolders];
    if (workflowIds.length > maxFolderWorkflows) {
      fail(
        "folderIds",
        `the folders hold ${workflowIds.length} workflows, more than the ${maxFolderWorkflows} a bulk ` +
          "cancel selects by; name fewer folders, or the workflows themselves",
      );
      throw invalidArgument(violations);
    }
  }
  return {
    workspaceId: request.workspaceId,
    workflowIds,
    triggers: request.triggers.length > 0 ? request.triggers : undefined,
    startedFrom,
    startedTo: Math.min(endDate ?? startedAt, startedAt),
  };
}
