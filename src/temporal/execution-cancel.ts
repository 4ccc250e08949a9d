import type { ConnectError } from "@connectrpc/connect";
import { type Client, WorkflowNotFoundError } from "@temporalio/client";
import { preconditionFailed } from "../errors/api-errors.js";
import type { Store } from "../store/store.js";
import { cancelReasonSignal, executionWorkflowId } from "./execution-ids.js";
import { flowlogSearchAttributes } from "./search-attributes.js";

export interface CancelDependencies {
  store: Store;
  temporal: Client;
}

/**
 * D47: cancels a running execution through Temporal's cancellation; the workflow stops the block in flight
 * and writes the one entry, error `cancelled` with the reason (execute-workflow.ts). Whose execution it is
 * comes from its Temporal search attributes, since a running execution has no entry yet; `owned` refuses
 * a workspace that is not the asker's (CancelExecution's caller, a bulk cancel's workspace). One that has
 * ended, with an entry or not, is refused.
 */
export async function cancelRunningExecution(
  deps: CancelDependencies,
  executionId: string,
  reason: string,
  owned: (workspaceId: string | undefined) => Promise<void>,
): Promise<void> {
  const handle = deps.temporal.workflow.getHandle(executionWorkflowId(executionId));
  const running = await missingAsUndefined(handle.describe());
  await owned(
    running?.typedSearchAttributes.get(flowlogSearchAttributes.workspaceId) ??
      (await deps.store.logs.getExecution(executionId))?.entry.workspaceId,
  );
  if (running?.status.name !== "RUNNING") throw await ended(deps.store, executionId, running?.status.name);
  // The reason first: the workflow reads it when the cancellation reaches it, in the same or a later task.
  const requested = async () => {
    if (reason !== "") await handle.signal(cancelReasonSignal, reason);
    await handle.cancel();
  };
  if ((await missingAsUndefined(requested().then(() => true))) === undefined) {
    // It ended between the look and the request: Temporal refuses both for a closed workflow.
    throw await ended(deps.store, executionId, "COMPLETED");
  }
}

/** The refusal of an execution that is no longer running, naming how it ended. */
async function ended(store: Store, executionId: string, status: string | undefined): Promise<ConnectError> {
  const entry = (await store.logs.getExecution(executionId))?.entry;
  const how = entry
    ? `has ended, logged with level ${entry.level}`
    : `is no longer running (${(status ?? "gone").toLowerCase()} in Temporal)`;
  return preconditionFailed({
    type: "EXECUTION_ENDED",
    subject: `execution ${executionId}`,
    description: `execution ${executionId} ${how}; only a running execution can be cancelled (D47)`,
  });
}

/** Temporal's "no such workflow", for a closed or unknown one, as undefined. */
async function missingAsUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
}
