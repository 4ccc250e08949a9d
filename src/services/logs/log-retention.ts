import type { LogRetention } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { invalidArgument } from "../../errors/api-errors.js";
import type { PlanTable } from "../../limits/plans.js";
import { retentionChoiceProblem, workspaceRetention } from "../../limits/retention.js";
import type { Store } from "../../store/store.js";
import { type Member, requireMember } from "../workspace-access.js";

/**
 * D41's setting as the API shows and takes it. Any member may read and set it, as every workspace
 * write (workspace-access.ts). A window longer than the plan's is refused naming the field; the plan is
 * checked when the choice is made, and a plan lowered later shortens the window it applies.
 */
export async function logRetentionOf(
  store: Store,
  planLimits: PlanTable,
  member: Member,
  workspaceId: string,
): Promise<LogRetention> {
  await requireMember(store, member, workspaceId);
  const setting = await store.retention.setting(workspaceId);
  return retentionView(
    workspaceRetention(planLimits, setting?.memberPlans ?? [], setting?.retentionDays ?? null),
  );
}

export async function setLogRetention(
  store: Store,
  planLimits: PlanTable,
  member: Member,
  workspaceId: string,
  days: number | undefined,
): Promise<LogRetention> {
  await requireMember(store, member, workspaceId);
  const setting = await store.retention.setting(workspaceId);
  const current = workspaceRetention(planLimits, setting?.memberPlans ?? [], null);
  if (days !== undefined) {
    const problem = retentionChoiceProblem(current.planDays, current.plan, days);
    if (problem) throw invalidArgument([{ field: "retentionDays", message: problem }]);
  }
  await store.retention.setRetentionDays(workspaceId, days ?? null);
  return retentionView({ ...current, workspaceDays: days ?? null, days: days ?? current.planDays });
}

function retentionView(retention: ReturnType<typeof workspaceRetention>): LogRetention {
  return {
    $typeName: "flowlog.logs.v1.LogRetention",
    retentionDays: retention.days,
    plan: retention.plan,
    planRetentionDays: retention.planDays,
    workspaceRetentionDays: retention.workspaceDays ?? undefined,
  };
}
