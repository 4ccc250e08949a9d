import type { LogRetention } from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { useSession } from "./context.js";
import { useCall } from "./use-call.js";

/** How long the workspace keeps its logs (D41), beside its id in the header. */
export function WorkspaceRetention() {
  const { api, workspaceId } = useSession();
  const [state] = useCall((signal) => api.logs.getLogRetention({ workspaceId }, { signal }), [workspaceId]);
  const retention = state.value?.retention;
  if (!retention) return null;
  return (
    <span class="retention" title={explained(retention)}>
      {retention.retentionDays === 0 ? "Logs kept forever" : `Logs kept ${retention.retentionDays} days`}
    </span>
  );
}

function explained({ plan, planRetentionDays, workspaceRetentionDays }: LogRetention): string {
  const byPlan = `The ${plan} plan keeps logs ${planRetentionDays === 0 ? "forever" : `${planRetentionDays} days`}`;
  return workspaceRetentionDays === undefined
    ? byPlan
    : `${byPlan}; this workspace chose ${workspaceRetentionDays}`;
}
