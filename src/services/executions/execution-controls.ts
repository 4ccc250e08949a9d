import type { ServiceImpl } from "@connectrpc/connect";
import type { WorkflowsService } from "../../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import type { RetryFrom, RetryVersion } from "../../temporal/execution-retry.js";
import { callerOf } from "../caller.js";
import { setRestStatus } from "../rest-status.js";
import type { ExecutionDependencies } from "../triggers/executions.js";
import { cancelExecution } from "./cancel-execution.js";
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
      await cancelExecution(deps, callerOf(context.values), request.executionId, request.reason);
      // Asked, not done: the entry is written as the execution ends.
      setRestStatus(context, 202);
      return { executionId: request.executionId };
    },
  };
}
