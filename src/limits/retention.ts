import { type Plan, type PlanTable, plans } from "./plans.js";

/**
 * D41 in one place: how many days a workspace keeps its log entries, and which entries that makes
 * expired. 0 days means no limit, wherever a number of days appears.
 */

export const dayMs = 24 * 60 * 60 * 1000;

/**
 * A workspace has no owner of its own: its plan is the best of its members' (users have plans, D5), so a
 * workspace keeps its entries as long as the plan of anyone who may read them allows. One without
 * members has the first plan's.
 */
export function workspacePlan(memberPlans: readonly Plan[]): Plan {
  return plans.findLast((plan) => memberPlans.includes(plan)) ?? plans[0];
}

export interface WorkspaceRetention {
  plan: Plan;
  /** The plan's window (FLOWLOG_PLAN_LIMITS), in days; 0 for no limit. */
  planDays: number;
  /** The workspace's own choice, when it made one; never longer than the plan's when made. */
  workspaceDays: number | null;
  /** What the purge applies: the shorter of the two, a plan changed since the choice included. */
  days: number;
}

export function workspaceRetention(
  planLimits: PlanTable,
  memberPlans: readonly Plan[],
  workspaceDays: number | null,
): WorkspaceRetention {
  const plan = workspacePlan(memberPlans);
  const planDays = planLimits[plan].retentionDays;
  const days =
    workspaceDays === null ? planDays : planDays === 0 ? workspaceDays : Math.min(planDays, workspaceDays);
  return { plan, planDays, workspaceDays, days };
}

/**
 * Why a workspace may not choose `days`, or undefined when it may: a whole number of days, at least 1,
 * and no more than its plan keeps (any number when the plan keeps entries forever).
 */
export function retentionChoiceProblem(planDays: number, plan: Plan, days: number): string | undefined {
  if (!Number.isInteger(days) || days < 1) return "retentionDays must be a whole number of days, at least 1";
  if (planDays !== 0 && days > planDays) {
    return `retentionDays may be at most ${planDays}, what the ${plan} plan keeps`;
  }
  return undefined;
}

/** Entries that started before this are expired under a window of `days` (0: none ever are). */
export function retentionCutoff(nowMs: number, days: number): number | undefined {
  return days === 0 ? undefined : nowMs - days * dayMs;
}

/** The first millisecond of the UTC day `ms` falls in. */
export function utcDayStart(ms: number): number {
  return Math.floor(ms / dayMs) * dayMs;
}
