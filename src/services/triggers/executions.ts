import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import type { Value } from "@bufbuild/protobuf/wkt";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Client } from "@temporalio/client";
import type { ExecutionResult } from "../../engine/execution-types.js";
import type { Trigger, UserRecord } from "../../store/records.js";
import type { Store } from "../../store/store.js";
import { startExecution } from "../../temporal/start-execution.js";
import { newId } from "../../util/ids.js";
import type { PlanTable } from "../accounts/plans.js";
import type { ExecutionMode } from "../limits/limits.js";
import { visibleWorkflow } from "../workspace-access.js";
import { admitExecution } from "./admission.js";

export interface ExecutionDependencies {
  store: Store;
  /** What each execution is admitted against (D12). */
  planLimits: PlanTable;
  temporal: Client;
  /** Tests run workers on their own task queues. */
  taskQueue?: string;
  clock: () => number;
}

export interface ExecutionCall {
  user: UserRecord;
  workflowId: string;
  trigger: Trigger;
  mode: ExecutionMode;
  input: Value | undefined;
}

export type Started =
  | { executionId: string; result?: undefined }
  | { executionId: string; result: ExecutionResult };

/**
 * Every trigger comes through here (D15): the workflow must be visible to the user, the execution is
 * admitted against the user's plan (D12), then it runs the workflow's current version on Temporal. A sync
 * call waits for the result; an async one returns as soon as Temporal has accepted the execution.
 */
export async function runWorkflow(deps: ExecutionDependencies, call: ExecutionCall): Promise<Started> {
  const workflow = visibleWorkflow(deps.store, call.user, call.workflowId);
  admitExecution(deps.store, deps.planLimits, call.user, call.mode, deps.clock());
  const executionId = newId("ex");
  const handle = await startExecution(
    deps.temporal,
    {
      executionId,
      workspaceId: workflow.workspaceId,
      workflowId: workflow.id,
      version: workflow.version,
      trigger: call.trigger,
      input: call.input ? toJson(ValueSchema, call.input) : null,
      billedUserId: call.user.id,
    },
    { taskQueue: deps.taskQueue },
  );
  if (call.mode === "async") return { executionId };
  return { executionId, result: await handle.result() };
}

/** The response block's output as the API returns it. */
export function outputValue(output: JsonValue): Value {
  return fromJson(ValueSchema, output);
}
