import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { plannedRetry, type RetryOptions } from "../../temporal/execution-retry.js";
import { type ExecutionDependencies, runWorkflow } from "../triggers/executions.js";
import { type Member, visibleTo } from "../workspace-access.js";

export interface RetryRequest extends RetryOptions {
  executionId: string;
}

/**
 * D47: a new execution of an ended one's workflow, with its trigger and input (execution-retry.ts), through
 * the same start as every trigger (runWorkflow: visibility, admission against the caller's plan, Temporal),
 * billed to the caller. Another workspace's execution, or one not logged yet, is not found (D10).
 */
export async function retryExecution(
  deps: ExecutionDependencies,
  caller: Member,
  request: RetryRequest,
): Promise<{ executionId: string; version: number }> {
  const { executionId } = request;
  const execution = await visibleTo(
    deps.store,
    caller,
    await deps.store.logs.getExecution(executionId),
    (found) => found.entry.workspaceId,
    `execution ${executionId}`,
  );
  const retry = await plannedRetry(deps.store, execution, request);
  return runWorkflow(deps, {
    caller,
    workflowId: retry.workflowId,
    trigger: retry.trigger,
    mode: "async",
    input: fromJson(ValueSchema, retry.input),
    version: retry.version,
    retryOf: executionId,
    reused: retry.reused,
  });
}
