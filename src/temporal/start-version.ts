import type { JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Client } from "@temporalio/client";
import type { ExecutionInput } from "../engine/execution-types.js";
import { asWorkflowState } from "../engine/json-shapes.js";
import type { Quotas } from "../limits/quotas.js";
import type { StoredWorkflowRecord, Trigger } from "../store/records.js";
import type { Store } from "../store/store.js";
import { newId } from "../util/ids.js";
import { type ExecutionHandle, type ExecutionRequest, startExecution } from "./start-execution.js";

export interface VersionStartDependencies {
  store: Store;
  /** D26's bounds, handed over with the state (issue 12). */
  quotas: Quotas;
  temporal: Client;
  taskQueue?: string | undefined;
}

/** One admitted execution of a workflow: whoever admitted it has checked who may run it (D10, D12). */
export interface VersionStart {
  workflow: StoredWorkflowRecord;
  /** The version to run and its state (versionToRun): the current one, or a saved one (D47). */
  run: { version: number; state: unknown };
  trigger: Trigger;
  input: JsonValue | null;
  billedUserId: string;
  /** The id to start under: a bulk retry derives it, so a start made again is the same one (D47). */
  executionId?: string;
  /** D47: the execution this one retries, recorded before it starts, at `now`. */
  retryOf?: string | undefined;
  reused?: ExecutionInput["reused"];
  now: number;
}

/**
 * Starts an admitted execution on Temporal: the version's state handed over, the retry link written first
 * so the retried execution shows its retry as soon as it runs. A start under an id already started hands
 * back that execution (start-execution.ts); a start that fails takes the link back. Every trigger's
 * (runWorkflow, D15) and every retry's (D47), single or bulk.
 */
export async function startWorkflowVersion(
  deps: VersionStartDependencies,
  start: VersionStart,
): Promise<{ executionId: string; version: number; handle: ExecutionHandle }> {
  const { workflow, retryOf } = start;
  const { version, state } = start.run;
  const executionId = start.executionId ?? newId("ex");
  if (retryOf) await deps.store.logs.recordRetry({ executionId, retryOf, createdAt: start.now });
  const request: ExecutionRequest = {
    executionId,
    workspaceId: workflow.workspaceId,
    workflowId: workflow.id,
    version,
    // The version just checked and admitted, handed over so the worker does not read it again
    // (issue 12); the worker compares it with the version saved (issue 49) and applies its own D26
    // bounds. The bounds stay in the input for a worker of before that, which takes them from here.
    workflow: {
      folderId: workflow.folderId,
      version,
      state: asWorkflowState(state),
      maxBlockRuns: deps.quotas.workflow.maxBlockRuns,
      maxHistoryBytes: deps.quotas.workflow.maxHistoryBytes,
    },
    trigger: start.trigger,
    input: start.input,
    billedUserId: start.billedUserId,
    ...(start.reused ? { reused: start.reused } : {}),
  };
  const handle = await startExecution(deps.temporal, request, { taskQueue: deps.taskQueue }).catch(
    async (error: unknown) => {
      if (retryOf) await deps.store.logs.forgetRetry(executionId);
      throw error;
    },
  );
  return { executionId, version, handle };
}

/**
 * The workflow's current version, or a saved one of it (D13: a saved version never changes); read before
 * the admission, so a version that is not there spends no token.
 */
export async function versionToRun(
  store: Store,
  workflow: StoredWorkflowRecord,
  asked: number | undefined,
): Promise<{ version: number; state: unknown }> {
  if (asked === undefined || asked === workflow.version) return workflow;
  const saved = await store.workflows.getWorkflowVersion(workflow.id, asked);
  if (!saved) throw new ConnectError(`workflow ${workflow.id} has no version ${asked}`, Code.NotFound);
  return saved;
}
