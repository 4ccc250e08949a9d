import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { WorkflowsService } from "../../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { type FieldViolation, invalidArgument, quotaReached } from "../../errors/api-errors.js";
import type { Quotas } from "../../limits/quotas.js";
import type { EnvironmentVariableRecord } from "../../store/records.js";
import type { Store } from "../../store/store.js";
import { isoFromMs } from "../../util/time.js";
import { callerOf } from "../caller.js";
import { requireMember } from "../workspace-access.js";

/**
 * The workspace's environment variables (D14). A value goes in and never comes out: responses carry
 * names and times, and no message names a value (D24).
 */
export function createEnvironmentHandlers({
  store,
  clock,
  quotas,
}: {
  store: Store;
  clock: () => number;
  /** Variables per workspace and bytes per value (D26). */
  quotas: Pick<Quotas, "workspace">;
}): Partial<ServiceImpl<typeof WorkflowsService>> {
  const { environmentVariables: max, environmentValueBytes } = quotas.workspace;
  return {
    async setEnvironmentVariable(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      // The name's form is declared in the .proto; the value's size is a quota (D26).
      const violations = valueProblems(request.value, environmentValueBytes);
      if (violations.length > 0) throw invalidArgument(violations);
      const { workspaceId, name, value } = request;
      const set = await store.environment.set(workspaceId, name, value, clock(), max);
      if ("full" in set) {
        const holder = `workspace ${workspaceId}`;
        const quota = "workspace.environmentVariables";
        throw quotaReached({ quota, holder, counted: "environment variables", count: set.full, max });
      }
      return { variable: variableView(set.created) };
    },

    async listEnvironmentVariables(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      return { variables: (await store.environment.list(request.workspaceId)).map(variableView) };
    },

    async deleteEnvironmentVariable(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      if (!(await store.environment.delete(request.workspaceId, request.name))) {
        throw new ConnectError(`environment variable ${request.name} not found`, Code.NotFound);
      }
      return {};
    },
  };
}

function valueProblems(value: string, maxBytes: number): FieldViolation[] {
  if (Buffer.byteLength(value, "utf8") <= maxBytes) return [];
  return [{ field: "value", message: `value must be at most ${maxBytes} bytes` }];
}

function variableView(variable: EnvironmentVariableRecord) {
  return { name: variable.name, updatedAt: isoFromMs(variable.updatedAt) };
}
