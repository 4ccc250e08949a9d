import type { ServiceImpl } from "@connectrpc/connect";
import type { WorkflowsService } from "../../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { callerOf } from "../caller.js";
import { setRestStatus } from "../rest-status.js";
import { type ExecutionDependencies, outputValue, runWorkflow } from "./executions.js";

/**
 * The api and chat triggers (D15): POST /api/v1/workflows/{id}/execute runs the workflow for the key's
 * user, sync by default (the answer carries the response block's output and HTTP status) or async
 * (202 with the executionId); POST /api/v1/workflows/{id}/chat runs it sync with the message as input.
 */
export function createCallTriggers(
  deps: ExecutionDependencies,
): Pick<ServiceImpl<typeof WorkflowsService>, "executeWorkflow" | "chatWorkflow"> {
  return {
    async executeWorkflow(request, context) {
      const mode = request.async ? "async" : "sync";
      const run = await runWorkflow(deps, {
        caller: callerOf(context.values),
        workflowId: request.id,
        trigger: "api",
        mode,
        input: request.input,
        call: context,
      });
      if (!run.result) {
        setRestStatus(context, 202);
        return { executionId: run.executionId };
      }
      setRestStatus(context, run.result.httpStatus);
      return {
        executionId: run.executionId,
        status: run.result.status,
        output: outputValue(run.result.httpBody),
      };
    },

    async chatWorkflow(request, context) {
      const input = outputValue({ message: request.message });
      const run = await runWorkflow(deps, {
        caller: callerOf(context.values),
        workflowId: request.id,
        trigger: "chat",
        mode: "sync",
        input,
        call: context,
      });
      const result = run.result;
      if (result) setRestStatus(context, result.httpStatus);
      return {
        executionId: run.executionId,
        status: result?.status ?? "",
        output: result && outputValue(result.httpBody),
      };
    },
  };
}
