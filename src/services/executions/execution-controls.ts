import type { ServiceImpl } from "@connectrpc/connect";
import type { WorkflowsService } from "../../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { cancelRunningExecution } from "../../temporal/execution-cancel.js";
import type { RetryFrom, RetryVersion } from "../../temporal/execution-retry.js";
import { callerOf } from "../caller.js";
import { setRestStatus } from "../rest-status.js";
import type { ExecutionDependencies } from "../triggers/executions.js";
import { visibleTo } from "../workspace-access.js";
import { retryExecution } from "./retry-execution.js";

/** D47: what a user can do to an execution once started, beside reading its log. */
export function createExecutionControls(
  deps: ExecutionDependencies,
): Pick<ServiceImpl<typeof WorkflowsService>, "cancelExecution" | "retryExecution"> {
  return {
    async retryExecution(request, context) {
      const retry = await retryExecution(deps, callerOf(context.values), {
        executionId: request.executionId,
        from: (request.from ?? "start") as RetryFrom,
        version: (request.version ?? "original") as RetryVersion,
      });
      // Started, not ended: the new entry is written as it ends.
      setRestStatus(context, 202);
      return { executionId: retry.executionId, retryOf: request.executionId, version: retry.version };
    },

    async cancelExecution(request, context) {
      const caller = callerOf(context.values);
      const what = `execution ${request.executionId}`;
      // D10: another workspace's execution, or none, is not found.
      await cancelRunningExecution(deps, request.executionId, request.reason, (workspaceId) =>
        visibleTo(deps.store, caller, workspaceId, (id) => id, what).then(() => undefined),
      );
      // Asked, not done: the entry is written as the execution ends.
      setRestStatus(context, 202);
      return { executionId: request.executionId };
    },
  };
}
