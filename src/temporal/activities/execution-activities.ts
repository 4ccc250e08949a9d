import { ConnectError } from "@connectrpc/connect";
import { ApplicationFailure, Context } from "@temporalio/activity";
import { executionCost } from "../../domain/model-prices.js";
import {
  type ExecutionLog,
  executionRefusedFailure,
  type LoadedWorkflow,
} from "../../engine/execution-types.js";
import { asWorkflowState, type WorkflowStateJson } from "../../engine/json-shapes.js";
import { admitExecution } from "../../limits/execution-limits.js";
import { defaultQuotas } from "../../limits/quotas.js";
import { executionCarrier, recordExecutionSpan } from "../../logging/tracing.js";
import type { FanOutIntent } from "../../store/outbox-store.js";
import type { LogEntryRecord } from "../../store/records.js";
import { derivedId } from "../../util/ids.js";
import { deliveryTaskQueue } from "../delivery-ids.js";
import type { FanOutOutbox } from "../fan-out-outbox.js";
import type { ActivityDeps } from "./deps.js";
import { type ExecutionStart, executionStartChecks } from "./execution-start.js";

/** The store side of an execution: the version it runs, and its one log entry (D17). */
export function executionActivities(deps: ActivityDeps, fanOuts: Pick<FanOutOutbox, "wake">) {
  const checks = executionStartChecks(deps);
  const bounds = () => {
    const { maxBlockRuns, maxHistoryBytes } = (deps.quotas ?? defaultQuotas).workflow;
    return { maxBlockRuns, maxHistoryBytes };
  };
  return {
    /**
     * A schedule has no caller to refuse at request time, so its runs are admitted here, against the
     * async bucket and the month's usage of the user who created it (D12). A refusal fails the run
     * before anything is written or notified (execute-workflow.ts).
     */
    async admitScheduledRun({
      billedUserId,
      workflowId,
    }: {
      billedUserId: string | null;
      workflowId: string;
    }): Promise<void> {
      // D31: a schedule that outlived its workflow's deletion (Temporal was down then) starts nothing.
      if (typeof (await deps.store.workflows.getWorkflow(workflowId))?.deletedAt === "number") {
        throw ApplicationFailure.nonRetryable(
          `workflow ${workflowId} was deleted; its schedule runs nothing`,
          executionRefusedFailure,
        );
      }
      const user = billedUserId === null ? undefined : await deps.store.accounts.getUser(billedUserId);
      if (!user) return;
      try {
        await admitExecution(deps.store, deps.planLimits, user, "async", Date.now());
      } catch (error) {
        if (!(error instanceof ConnectError)) throw error;
        throw ApplicationFailure.nonRetryable(error.rawMessage, executionRefusedFailure);
      }
    },

    /**
     * Issue 49: a start that hands over its state (the API's, issue 12) runs it only when it is the version
     * the store holds, in the start's workspace, billed to a member (execution-start.ts says what is
     * checked and why). The answer leaves the state out: the workflow has it already, and history records
     * an answer, so it would carry the state twice.
     */
    async checkHandedWorkflow(
      start: ExecutionStart & { state: WorkflowStateJson },
    ): Promise<Omit<LoadedWorkflow, "state">> {
      const { state, ...checked } = start;
      const head = await checks.headFor(checked);
      await checks.checkState(checked, state);
      return { folderId: head.folderId, version: checked.version, ...bounds() };
    },

    /**
     * The version a start names, read from the store, once the start is found to name a workflow of its
     * workspace billed to a member (issue 49); anything else fails for good, writing nothing. The worker's
     * block run limit (D26) travels with it into the workflow, which may not read configuration itself.
     */
    async loadWorkflowVersion(start: ExecutionStart): Promise<LoadedWorkflow> {
      const head = await checks.headFor(start);
      // A schedule runs whatever version is current when it fires (D15): it asks for version 0.
      const version = start.version === 0 ? head.version : start.version;
      const saved = await deps.store.workflows.getWorkflowVersion(start.workflowId, version);
      if (!saved) return checks.refuse(start, checks.notFound(start));
      return { folderId: head.folderId, version, state: asWorkflowState(saved.state), ...bounds() };
    },

    /**
     * Idempotent (D17): the log id is derived from the execution id and the store ignores a second insert
     * of an execution, so a retry after a write whose acknowledgement was lost changes nothing.
     */
    async writeExecutionLog(log: ExecutionLog): Promise<{ logId: string }> {
      const entry = logEntryOf(log, deps);
      const { executionId, traceContext: caller } = log.execution;
      // D50: the notifications' spans are the execution span's children, in whichever process they start.
      const trace = executionCarrier(executionId, caller);
      // Notifications start once the entry exists (issue 5, item 3), and only when a subscription matches:
      // otherwise the fan-out would find nothing to deliver. The intent to start them is written with the
      // entry, in its transaction, and the worker's outbox dispatcher starts the fan-out: the execution
      // never waits for that call (D19), and a worker killed right after the write leaves the intent for
      // the next dispatcher (fan-out-outbox.ts).
      const fanOutOf = async (written: LogEntryRecord): Promise<FanOutIntent | undefined> =>
        (await deps.store.notifications.anyMatching(written.workspaceId, written))
          ? {
              logId: written.id,
              workspaceId: written.workspaceId,
              workflowId: written.workflowId,
              // The execution's own queue: a local activity runs on the workflow's worker.
              taskQueue: deliveryTaskQueue(Context.current().info.taskQueue),
              traceparent: trace?.traceparent ?? null,
              tracestate: trace?.tracestate ?? null,
            }
          : undefined;
      if (await insertOrRecordRefusal(deps, entry, log, fanOutOf)) fanOuts.wake();
      recordExecutionSpan({
        executionId,
        caller,
        name: "execution",
        attributes: {
          "flowlog.execution.id": executionId,
          "flowlog.workspace.id": entry.workspaceId,
          "flowlog.workflow.id": entry.workflowId,
          "flowlog.workflow.version": log.execution.version,
          "flowlog.trigger": entry.trigger,
          "flowlog.execution.status": log.status,
        },
        startedAt: log.startedAt,
        endedAt: log.endedAt,
        ...(log.status === "error" ? { errorType: "execution_failed" } : {}),
      });
      // The entry holds the outputs now; those parked outside Temporal's payloads go (block-activities.ts).
      if (log.releaseParked) await deps.store.parkedOutputs.release(log.execution.executionId);
      deps.metrics?.executionLogged(entry.trigger, entry.level === "error" ? "error" : "success");
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

/** A store refusal that outlasts this many attempts is taken as a poisoned entry, not a passing lock. */
const attemptsBeforeErrorEntry = 3;

/**
 * Writes the entry, or, when the store keeps refusing it, an error entry saying why (issue 11). The log
 * write retries without limit, since every execution must have its entry (D17): an entry the store can
 * never take (a NaN cost against a NOT NULL column, before priceOf read own properties only) would
 * retry for ever, hang the sync caller and leave no log. The error entry leaves out the parts that can
 * carry such poison (spans, output, the cost breakdown) and keeps a finite total, so billing stands. It
 * has the same id, so whichever insert lands first is the execution's one entry. Either goes in with the
 * fan-out its subscriptions match; the intent is returned.
 */
async function insertOrRecordRefusal(
  deps: ActivityDeps,
  entry: LogEntryRecord,
  { workflowState, execution }: Pick<ExecutionLog, "workflowState" | "execution">,
  fanOutOf: (entry: LogEntryRecord) => Promise<FanOutIntent | undefined>,
): Promise<FanOutIntent | undefined> {
  // A schedule asks for version 0, the current one; a run that never loaded its version ran none (D47).
  const workflowVersion = execution.version > 0 ? execution.version : null;
  try {
    const fanOut = await fanOutOf(entry);
    await deps.store.logs.insertExecution({ entry, workflowState, workflowVersion }, fanOut);
    return fanOut;
  } catch (error) {
    if (Context.current().info.attempt < attemptsBeforeErrorEntry) throw error;
    const reason = `the store refused this execution's log entry (${(error as Error).message}); it is kept without its trace spans, output and cost breakdown`;
    const total = Number.isFinite(entry.cost.total) ? entry.cost.total : 0;
    const refused: LogEntryRecord = {
      ...entry,
      level: "error",
      cost: { total, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} },
      traceSpans: [],
      finalOutput: { error: reason },
    };
    const fanOut = await fanOutOf(refused);
    await deps.store.logs.insertExecution({ entry: refused, workflowState, workflowVersion }, fanOut);
    return fanOut;
  }
}

/** An execution's one log id (D17), derived so that every attempt of the write names the same entry. */
export function logIdOf(executionId: string): string {
  return derivedId("log", executionId);
}
