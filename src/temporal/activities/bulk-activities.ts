import { Code, ConnectError } from "@connectrpc/connect";
import { Context } from "@temporalio/activity";
import { type Client, WorkflowNotFoundError } from "@temporalio/client";
import { executionAdmission } from "../../limits/execution-limits.js";
import { defaultQuotas } from "../../limits/quotas.js";
import type { PageKey } from "../../store/log-list-sql.js";
import { derivedId } from "../../util/ids.js";
import type { BulkJobStop, BulkRetryInput, BulkSelection } from "../bulk-job-ids.js";
import { executionWorkflowId } from "../execution-ids.js";
import { plannedRetry } from "../execution-retry.js";
import { startWorkflowVersion, versionToRun } from "../start-version.js";
import type { ActivityDeps } from "./deps.js";

/** The executions of a page of a job's selection, oldest first, each with its key to continue after. */
export interface BulkPage {
  executions: { executionId: string; key: PageKey }[];
}

/** What became of each execution of a batch, in order; the batch may end early. */
export interface BulkRetryBatch {
  outcomes: ({ retried: string } | { failed: string })[];
  /** The caller's async bucket is empty (D12): the job waits this long, then goes on from the next one. */
  waitMs?: number;
  /** The job cannot go on. */
  stop?: BulkJobStop;
}

/** The job as a batch needs it: who pays, what to do, where the retries run. */
export type BulkRetryJob = Pick<
  BulkRetryInput,
  "workspaceId" | "userId" | "taskQueue" | "from" | "version"
> & {
  jobId: string;
};

/**
 * The store's and Temporal's side of a bulk retry job (D47). Each retry's execution id is derived from the
 * job and the execution it retries, so a batch run again after its worker was lost finds the retries it
 * had started (in Temporal, where a start is the fact) and neither starts nor pays for them twice; one it
 * had admitted and linked but not started is started without a second token. Only a worker lost between
 * an admission and its link leaves a token spent for nothing.
 */
export function bulkActivities(deps: ActivityDeps, temporal: Client) {
  const clock = deps.clock ?? Date.now;
  const quotas = deps.quotas ?? defaultQuotas;

  const started = async (executionId: string) => {
    try {
      await temporal.workflow.getHandle(executionWorkflowId(executionId)).describe();
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  };

  return {
    /** The selection's executions after `after`, oldest first by startedAt then id (D8's keyset). */
    async bulkPage(
      request: BulkSelection & { after?: PageKey | undefined; limit: number },
    ): Promise<BulkPage> {
      const page = await deps.store.logs.list(request.filter, {
        order: "asc",
        limit: request.limit,
        after: request.after,
        withCostDetail: false,
        withTraceSpans: false,
        withFinalOutput: false,
      });
      return {
        executions: page.entries.map((entry) => ({
          executionId: entry.executionId,
          key: { startedAt: entry.startedAt, id: entry.id },
        })),
      };
    },

    /**
     * Retries the executions in order, until one waits for the caller's bucket or the job must stop. Each
     * is admitted like any execution (D12), after the check that its retry has not started already.
     */
    async bulkRetryBatch({
      job,
      executionIds,
    }: {
      job: BulkRetryJob;
      executionIds: string[];
    }): Promise<BulkRetryBatch> {
      const { store } = deps;
      const outcomes: BulkRetryBatch["outcomes"] = [];
      const [user, member] = await Promise.all([
        store.accounts.getUser(job.userId),
        store.accounts.isMember(job.userId, job.workspaceId),
      ]);
      if (!user || !member) return { outcomes, stop: "not_a_member" };
      for (const retryOf of executionIds) {
        Context.current().heartbeat(outcomes.length);
        const executionId = derivedId("ex", `${job.jobId}:${retryOf}`);
        if (await started(executionId)) {
          outcomes.push({ retried: executionId });
          continue;
        }
        const failure = (why: string) => outcomes.push({ failed: `execution ${retryOf}: ${why}` });
        const execution = await store.logs.getExecution(retryOf);
        if (execution?.entry.workspaceId !== job.workspaceId) {
          failure("its entry is gone");
          continue;
        }
        try {
          const retry = await plannedRetry(store, execution, job);
          const workflow = await store.workflows.getWorkflow(retry.workflowId);
          if (!workflow || workflow.deletedAt !== null) {
            failure(`workflow ${retry.workflowId} is deleted (D31)`);
            continue;
          }
          const run = await versionToRun(store, workflow, retry.version);
          const now = clock();
          // A link is written after the admission: one found was paid for by a batch lost before its start.
          const linked = (await store.logs.retryLinks(executionId)).retryOf === retryOf;
          const admission = linked
            ? { admitted: true as const }
            : await executionAdmission(store, deps.planLimits, user, "async", now);
          if (!admission.admitted) {
            // D47: the bucket is waited for; the month's usage, spent, ends the job.
            if (admission.retryAfterSeconds === undefined) return { outcomes, stop: "usage_limit" };
            return { outcomes, waitMs: Math.max(1, admission.retryAfterSeconds) * 1000 };
          }
          await startWorkflowVersion(
            { store, quotas, temporal, taskQueue: job.taskQueue },
            {
              workflow,
              run,
              trigger: retry.trigger,
              input: retry.input,
              reused: retry.reused,
              retryOf,
              billedUserId: user.id,
              executionId,
              now,
            },
          );
          outcomes.push({ retried: executionId });
        } catch (error) {
          // The execution's own refusals (its record, its version); anything else is the activity's retry.
          if (!(error instanceof ConnectError) || error.code === Code.Unavailable) throw error;
          failure(error.rawMessage);
        }
      }
      return { outcomes };
    },
  };
}
