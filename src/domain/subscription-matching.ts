import type { ExecutionFacts, SubscriptionSettings } from "../store/subscriptions-store.js";

/**
 * Which workflows and executions a subscription is about: the one owner of this rule, read by the store's
 * matching (an execution's fan-out) and by the no-activity watcher (whether its watch still applies).
 */

/** D18: every current and future workflow of the workspace, or the ones it names. */
export function selectsWorkflow(
  subscription: Pick<SubscriptionSettings, "allWorkflows" | "workflowIds">,
  workflowId: string,
): boolean {
  return subscription.allWorkflows || subscription.workflowIds.includes(workflowId);
}

/**
 * Whether a completed execution concerns the subscription (spec "Events"): it selects the workflow and its
 * level and trigger filters admit the execution (empty = all, D18). A subscription with an alert rule
 * ignores its level filter: the rule decides (D21).
 */
export function admitsExecution(
  subscription: Pick<
    SubscriptionSettings,
    "allWorkflows" | "workflowIds" | "levelFilter" | "triggerFilter" | "alertRule"
  >,
  execution: ExecutionFacts,
): boolean {
  const { levelFilter, triggerFilter } = subscription;
  return (
    selectsWorkflow(subscription, execution.workflowId) &&
    (subscription.alertRule !== null || levelFilter.length === 0 || levelFilter.includes(execution.level)) &&
    (triggerFilter.length === 0 || triggerFilter.includes(execution.trigger))
  );
}
