import type { Level, Trigger } from "../store/records.js";
import type { AlertRuleRecord } from "./alert-rules.js";

/**
 * Which workflows and executions a subscription is about: the one owner of this rule, read by the store's
 * matching (an execution's fan-out) and by the no-activity watcher (whether its watch still applies).
 */

/** What of a subscription's settings selects workflows and executions (D18, D21). */
export interface SubscriptionSelection {
  /** Every current and future workflow of the workspace; workflowIds is empty then. */
  allWorkflows: boolean;
  workflowIds: string[];
  /** Empty means all levels (D18); a subscription with an alert rule ignores it (D21). */
  levelFilter: Level[];
  /** Empty means all triggers (D18). */
  triggerFilter: Trigger[];
  alertRule: AlertRuleRecord | null;
}

/** What a completed execution offers to match against (spec "Events"). */
export interface ExecutionFacts {
  workflowId: string;
  level: Level;
  trigger: Trigger;
}

/** D18: every current and future workflow of the workspace, or the ones it names. */
export function selectsWorkflow(
  subscription: Pick<SubscriptionSelection, "allWorkflows" | "workflowIds">,
  workflowId: string,
): boolean {
  return subscription.allWorkflows || subscription.workflowIds.includes(workflowId);
}

/**
 * Whether a completed execution concerns the subscription (spec "Events"): it selects the workflow and its
 * level and trigger filters admit the execution (empty = all, D18). A subscription with an alert rule
 * ignores its level filter: the rule decides (D21).
 */
export function admitsExecution(subscription: SubscriptionSelection, execution: ExecutionFacts): boolean {
  const { levelFilter, triggerFilter } = subscription;
  return (
    selectsWorkflow(subscription, execution.workflowId) &&
    (subscription.alertRule !== null || levelFilter.length === 0 || levelFilter.includes(execution.level)) &&
    (triggerFilter.length === 0 || triggerFilter.includes(execution.trigger))
  );
}
