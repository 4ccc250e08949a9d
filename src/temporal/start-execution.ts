import { type Client, WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from "@temporalio/client";
import type { ExecutionInput } from "../engine/execution-types.js";
import { currentTraceCarrier } from "../logging/tracing.js";
import { newId } from "../util/ids.js";
import { executionWorkflowId } from "./execution-ids.js";
import { flowlogSearchAttributes } from "./search-attributes.js";
import { FLOWLOG_TASK_QUEUE } from "./task-queue.js";
// A type only: the API server never loads workflow code.
import type { executeWorkflow } from "./workflows/index.js";
import { workspacePriority } from "./workspace-priority.js";

export { executionWorkflowId };

export type ExecutionHandle = WorkflowHandle<typeof executeWorkflow>;

/** A request to run one workflow version; without an executionId a new one is made. */
export type ExecutionRequest = Omit<ExecutionInput, "executionId"> & { executionId?: string };

/** How operators find executions in the Temporal UI: by workspace, workflow and trigger. */
export function executionSearchAttributes(
  input: Pick<ExecutionInput, "workspaceId" | "workflowId" | "trigger">,
) {
  return [
    { key: flowlogSearchAttributes.workspaceId, value: input.workspaceId },
    { key: flowlogSearchAttributes.workflowId, value: input.workflowId },
    { key: flowlogSearchAttributes.trigger, value: input.trigger },
  ];
}

/**
 * Starts an execution, or hands back the one already started with this executionId, running or closed:
 * a trigger retrying its request never runs a workflow twice. With tracing on, the caller's span travels
 * in the input (D50), for the worker to make the execution's spans its children.
 */
export async function startExecution(
  client: Client,
  request: ExecutionRequest,
  options: {
    taskQueue?: string;
    /**
     * How long a workflow task may run before Temporal hands it to another worker (the server's 10 s unless
     * told). A worker lost during a first try, a local activity inside a workflow task, is noticed only
     * then; tests that kill one shorten it.
     */
    workflowTaskTimeoutMs?: number;
  } = {},
): Promise<ExecutionHandle> {
  const traceContext = currentTraceCarrier();
  const input: ExecutionInput = {
    ...request,
    executionId: request.executionId ?? newId("ex"),
    ...(traceContext ? { traceContext } : {}),
  };
  const workflowId = executionWorkflowId(input.executionId);
  try {
    return await client.workflow.start<typeof executeWorkflow>("executeWorkflow", {
      workflowId,
      taskQueue: options.taskQueue ?? FLOWLOG_TASK_QUEUE,
      args: [input],
      workflowIdReusePolicy: "REJECT_DUPLICATE",
      workflowIdConflictPolicy: "USE_EXISTING",
      typedSearchAttributes: executionSearchAttributes(input),
      priority: workspacePriority(input.workspaceId),
      ...(options.workflowTaskTimeoutMs === undefined
        ? {}
        : { workflowTaskTimeout: options.workflowTaskTimeoutMs }),
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    return client.workflow.getHandle<typeof executeWorkflow>(workflowId);
  }
}
