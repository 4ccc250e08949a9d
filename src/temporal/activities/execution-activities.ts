import { createHash } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { ApplicationFailure, Context } from "@temporalio/activity";
import type { Client } from "@temporalio/client";
import type { ExecutionLog, LoadedWorkflow } from "../../engine/execution-types.js";
import { asWorkflowState } from "../../engine/json-shapes.js";
import { executionCost } from "../../services/pricing/model-prices.js";
import { admitExecution } from "../../services/triggers/admission.js";
import type { LogEntryRecord } from "../../store/records.js";
import { newId } from "../../util/ids.js";
import { startFanOut } from "../start-fan-out.js";
import type { ActivityDeps } from "./deps.js";

export interface WorkflowVersionRef {
  workspaceId: string;
  workflowId: string;
  version: number;
}

/** The store side of an execution: the version it runs, and its one log entry (D17). */
export function executionActivities(deps: ActivityDeps, temporal: Client) {
  return {
    /**
     * A schedule has no caller to refuse at request time, so its runs are admitted here, against the
     * async bucket and the month's usage of the user who created it (D12); a refusal fails the run,
     * which is then logged as an error saying why.
     */
    async admitScheduledRun({ billedUserId }: { billedUserId: string | null }): Promise<void> {
      const user = billedUserId === null ? undefined : deps.store.accounts.getUser(billedUserId);
      if (!user) return;
      try {
        admitExecution(deps.store, deps.planLimits, user, "async", Date.now());
      } catch (error) {
        if (!(error instanceof ConnectError)) throw error;
        throw ApplicationFailure.nonRetryable(error.rawMessage, "ExecutionRefused");
      }
    },

    /** Fails for good (no retry helps) when the workspace has no such workflow version. */
    async loadWorkflowVersion({
      workspaceId,
      workflowId,
      version,
    }: WorkflowVersionRef): Promise<LoadedWorkflow> {
      const workflow = deps.store.workflows.getWorkflow(workflowId);
      // A schedule runs whatever version is current when it fires (D15): it asks for version 0.
      const wanted = version === 0 ? (workflow?.version ?? 0) : version;
      const saved = deps.store.workflows.getWorkflowVersion(workflowId, wanted);
      if (!workflow || workflow.workspaceId !== workspaceId || !saved) {
        throw ApplicationFailure.nonRetryable(
          `workflow ${workflowId} has no version ${version} in workspace ${workspaceId}`,
          "WorkflowVersionNotFound",
        );
      }
      return { folderId: workflow.folderId, version: wanted, state: asWorkflowState(saved.state) };
    },

    /**
     * Idempotent (D17): the log id is derived from the execution id and the store ignores a second insert
     * of an execution, so a retry after a write whose acknowledgement was lost changes nothing.
     */
    async writeExecutionLog(log: ExecutionLog): Promise<{ logId: string }> {
      const entry = logEntryOf(log, deps);
      deps.store.logs.insertExecution({ entry, workflowState: log.workflowState });
      // Notifications start once the entry exists (issue 5, item 3), and only when a subscription matches:
      // otherwise the fan-out would find nothing to deliver. Started here, one call to the server, rather
      // than as a child of the execution, whose result would wait two more workflow tasks for it (D19:
      // never in the execution's critical path; the delivery bench measured 100 ms per sync execution).
      if (deps.store.notifications.anyMatching(entry.workspaceId, entry)) {
        await startFanOut(temporal, {
          logId: entry.id,
          workspaceId: entry.workspaceId,
          workflowId: entry.workflowId,
          // The execution's own queue: a local activity runs on the workflow's worker.
          taskQueue: Context.current().info.taskQueue,
        });
      }
      return { logId: entry.id };
    },
  };
}

function logEntryOf(log: ExecutionLog, deps: ActivityDeps): LogEntryRecord {
  const { execution } = log;
  return {
    id: logIdOf(execution.executionId),
    workspaceId: execution.workspaceId,
    workflowId: execution.workflowId,
    folderId: log.folderId,
    executionId: execution.executionId,
    billedUserId: execution.billedUserId,
    level: log.status === "error" ? "error" : "info",
    trigger: execution.trigger,
    startedAt: log.startedAt,
    endedAt: log.endedAt,
    totalDurationMs: log.endedAt - log.startedAt,
    cost: executionCost(log.usages, deps.prices),
    files: null,
    traceSpans: log.traceSpans,
    finalOutput: log.finalOutput,
  };
}

function logIdOf(executionId: string): string {
  return newId("log", createHash("sha256").update(executionId).digest().subarray(0, 12));
}
