import { type Client, WorkflowNotFoundError } from "@temporalio/client";
import { timerRuleOf } from "../domain/alert-rules.js";
import type { Store } from "../store/store.js";
import type { SubscriptionRecord } from "../store/subscriptions-store.js";
import { deliverySearchAttributes } from "./delivery-ids.js";
import { inactivityWatchId, recheckInactivitySignal } from "./inactivity-ids.js";
import { FLOWLOG_TASK_QUEUE } from "./task-queue.js";
// A type only: the API server never loads workflow code.
import type { watchInactivity } from "./workflows/index.js";

/**
 * Makes sure every workflow a no_activity subscription selects has its watcher (D21: checked by a durable
 * Temporal timer, not on execution), and wakes the running ones so they re-read the rule. Signal-with-start
 * on a fixed id is idempotent: an existing watcher is signalled, a missing or finished one is started.
 * Watchers stop on their own when the subscription is deleted, disabled or given another rule.
 */
export async function ensureInactivityWatchers(
  temporal: { client: Client; taskQueue?: string | undefined },
  store: Store,
  subscription: SubscriptionRecord,
  now: number,
): Promise<void> {
  if (!subscription.active || !timerRuleOf(subscription.alertRule?.rule)) return;
  const workflowIds = subscription.allWorkflows
    ? store.workflows.listWorkflows(subscription.workspaceId).map((workflow) => workflow.id)
    : subscription.workflowIds;
  await Promise.all(
    workflowIds.map((workflowId) =>
      temporal.client.workflow.signalWithStart<typeof watchInactivity, []>("watchInactivity", {
        workflowId: inactivityWatchId(subscription.id, workflowId),
        taskQueue: temporal.taskQueue ?? FLOWLOG_TASK_QUEUE,
        args: [{ subscriptionId: subscription.id, workflowId, sinceMs: now }],
        signal: recheckInactivitySignal,
        signalArgs: [],
        // The same attributes as the alert's deliveries: operators find both by subscription and workflow.
        typedSearchAttributes: deliverySearchAttributes({
          workspaceId: subscription.workspaceId,
          subscriptionId: subscription.id,
          workflowId,
        }),
      }),
    ),
  );
}

/** D18: "all workflows" includes future ones, so a new workflow gets the watchers of such subscriptions. */
export async function watchNewWorkflow(
  temporal: { client: Client; taskQueue?: string | undefined },
  store: Store,
  workspaceId: string,
  now: number,
): Promise<void> {
  const all = store.notifications.list(workspaceId).filter((subscription) => subscription.allWorkflows);
  await Promise.all(all.map((subscription) => ensureInactivityWatchers(temporal, store, subscription, now)));
}

/**
 * D31: a deleted workflow's watchers end now, not at their next wake-up, which may be days away. Any live
 * subscription of the workspace may have one (a disabled one, or one whose rule changed, still sleeps
 * until it looks again), so each is terminated by its fixed id; one that never ran or already stopped is
 * nothing to end.
 */
export async function endInactivityWatchers(
  client: Client,
  store: Store,
  workflow: { id: string; workspaceId: string },
): Promise<void> {
  await Promise.all(
    store.notifications.list(workflow.workspaceId).map((subscription) =>
      client.workflow
        .getHandle(inactivityWatchId(subscription.id, workflow.id))
        .terminate(`workflow ${workflow.id} was deleted (D31)`)
        .catch((error: unknown) => {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
        }),
    ),
  );
}
