import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { isGrpcServiceError, ServiceError } from "@temporalio/client";
import type {
  BulkRetryExecutionsRequest,
  WorkflowsService,
} from "../../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { invalidArgument, preconditionFailed } from "../../errors/api-errors.js";
import type { LogFilter } from "../../store/log-list-sql.js";
import {
  type BulkJobState,
  type BulkRetryInput,
  type BulkRetryOptions,
  maxBulkExecutions,
} from "../../temporal/bulk-job-ids.js";
import { type BulkJob, bulkJobs } from "../../temporal/bulk-jobs.js";
import { FLOWLOG_TASK_QUEUE } from "../../temporal/task-queue.js";
import { callerOf } from "../caller.js";
import { entryFilterOf, isoDate } from "../logs/entry-filter.js";
import { setRestStatus } from "../rest-status.js";
import type { ExecutionDependencies } from "../triggers/executions.js";
import { requireMember } from "../workspace-access.js";
import { beyondLimit, bulkJobView, jobRunning } from "./bulk-job-answers.js";

type BulkRpcs = Pick<
  ServiceImpl<typeof WorkflowsService>,
  "bulkRetryExecutions" | "getBulkJob" | "cancelBulkJob"
>;

/**
 * D47: retry in bulk, and the bulk jobs of both kinds (bulk-cancel.ts starts the other). The selection is
 * counted here and the job, which Temporal runs and keeps (temporal/bulk-jobs.ts, workflows/bulk-retry.ts),
 * is started, read and cancelled in the API's words.
 */
export function createBulkJobControls(deps: ExecutionDependencies): BulkRpcs {
  const { store } = deps;
  const jobs = bulkJobs(deps.temporal, "retry");
  const cancels = bulkJobs(deps.temporal, "cancel");

  /** The workspace's job of that id, of either kind: another workspace's, or none, is not found (D10). */
  const jobOf = async (request: { workspaceId: string; id: string }, context: HandlerContext) => {
    await requireMember(store, callerOf(context.values), request.workspaceId);
    const job =
      (await jobs.byId(request.workspaceId, request.id)) ??
      (await cancels.byId(request.workspaceId, request.id));
    if (!job) throw new ConnectError(`bulk job ${request.id} not found`, Code.NotFound);
    return job;
  };

  /** A running job's progress is its worker's answer: none in time is unavailable, naming the job. */
  const progressOf = async (job: BulkJob): Promise<BulkJobState> => {
    try {
      return await jobs.progress(job);
    } catch (error) {
      if (!(error instanceof ServiceError || isGrpcServiceError(error))) throw error;
      throw new ConnectError(
        `the progress of ${job.handle.workflowId} could not be read: no worker of the executions' queue ` +
          "answered in time; it goes on once one runs",
        Code.Unavailable,
      );
    }
  };

  return {
    async bulkRetryExecutions(request, context) {
      // Wall time, not deps.clock (which drives the buckets and which tests freeze): entries start by it.
      const startedAt = Date.now();
      const filter = selectionOf(request, deps.quotas.listParameterValues, startedAt);
      const caller = callerOf(context.values);
      await requireMember(store, caller, request.workspaceId);
      const executions = await store.logDeletion.count(filter);
      if (request.preview) return { executions };
      if (executions > maxBulkExecutions)
        throw beyondLimit(executions, "narrow them, with startDate and endDate say");
      const input: BulkRetryInput = {
        workspaceId: request.workspaceId,
        userId: caller.user.id,
        taskQueue: deps.taskQueue ?? FLOWLOG_TASK_QUEUE,
        filter,
        ...retryOptionsOf(request),
        total: executions,
        startedAt,
      };
      const start = await jobs.start(input, input.taskQueue, memoOf(input, request));
      if ("running" in start) throw jobRunning("retry", request.workspaceId, start.running);
      setRestStatus(context, 202);
      // As the job stands at its start: no worker need have run it yet.
      const state: BulkJobState = { ...input, kind: "retry", status: "running", done: 0, failed: 0 };
      return { executions, job: bulkJobView(start.started, state) };
    },

    async getBulkJob(request, context) {
      const job = await jobOf(request, context);
      return { job: bulkJobView(job, await progressOf(job)) };
    },

    async cancelBulkJob(request, context) {
      const job = await jobOf(request, context);
      if (!job.running) {
        throw preconditionFailed({
          type: "BULK_JOB_ENDED",
          subject: `bulk job ${request.id}`,
          description: `bulk job ${request.id} has ended (${job.status.toLowerCase()} in Temporal); only a running job can be cancelled`,
        });
      }
      await jobs.cancel(job);
      return { job: bulkJobView(job, await progressOf(job)) };
    },
  };
}

/**
 * ListLogs' filters as the list reads them (entry-filter.ts), so the same field gets the same error, with
 * startedTo no later than the job's start: the retries it makes start after it and are never selected.
 */
function selectionOf(
  request: BulkRetryExecutionsRequest,
  maxListValues: number,
  startedAt: number,
): LogFilter {
  const { filter, violations } = entryFilterOf(request, maxListValues);
  const fail = (field: string, message: string) => violations.push({ field, message });
  const startedFrom = isoDate(request.startDate, "startDate", fail);
  const endDate = isoDate(request.endDate, "endDate", fail);
  if (violations.length > 0) throw invalidArgument(violations);
  return { ...filter, startedFrom, startedTo: Math.min(endDate ?? startedAt, startedAt) };
}

function retryOptionsOf(request: BulkRetryExecutionsRequest): BulkRetryOptions {
  return {
    from: (request.from ?? "start") as BulkRetryOptions["from"],
    version: (request.version ?? "original") as BulkRetryOptions["version"],
  };
}

/** What the Temporal UI shows of the job beside its id: who asked what, and how many it takes. */
function memoOf(input: BulkRetryInput, request: BulkRetryExecutionsRequest): Record<string, unknown> {
  const { workspaceId: _, $typeName: __, preview: ___, ...asked } = request;
  const filters = Object.fromEntries(
    Object.entries(asked).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0)),
  );
  return { kind: "retry", requestedBy: input.userId, filters, total: input.total };
}
