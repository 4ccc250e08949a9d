import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from "@temporalio/client";
import { alertRuleNames, timerRuleOf } from "../domain/alert-rules.js";
import type { Store } from "../store/store.js";
import type { SubscriptionRecord } from "../store/subscriptions-store.js";
import { deliverySearchAttributes, deliveryTaskQueue } from "./delivery-ids.js";
import { type InactivityWatch, inactivityWatchId, recheckInactivitySignal } from "./inactivity-ids.js";
import { FLOWLOG_TASK_QUEUE } from "./task-queue.js";
// A type only: the API server never loads workflow code.
import type { watchInactivity } from "./workflows/index.js";
import { workspacePriority } from "./workspace-priority.js";

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
    ? (await store.workflows.listWorkflows(subscription.workspaceId)).map((workflow) => workflow.id)
    : subscription.workflowIds;
  await Promise.all(
    workflowIds.map((workflowId) =>
      temporal.client.workflow.signalWithStart<typeof watchInactivity, []>("watchInactivity", {
        ...watcherOf(temporal, subscription, workflowId, now),
        signal: recheckInactivitySignal,
        signalArgs: [],
      }),
    ),
  );
}

/** Subscriptions read per page by a restore: bounded memory, and bounded starts in flight at once. */
const restorePageSize = 50;

/** What a restore found: watchers it started again, and running ones it left alone. */
export interface RestoredWatchers {
  recreated: number;
  running: number;
}

/**
 * Issue 18, item 4: starts the watcher of every (subscription, workflow) that needs one and has none
 * running, so a watcher an operator terminated, or one lost with a restored Temporal database, comes back
 * when a worker starts. A plain start on the fixed id with the conflict policy FAIL leaves a running
 * watcher as it is (no signal, no new run), and its refusal tells us it was there. Subscriptions are read
 * a page at a time; `signal` stops between pages. A restored watcher counts the silence of a workflow that
 * never ran from when its watch began: the subscription's last change, or the workflow's creation.
 */
export async function restoreInactivityWatchers(
  temporal: { client: Client; taskQueue?: string | undefined },
  store: Store,
  signal?: AbortSignal,
): Promise<RestoredWatchers> {
  const timerRules = alertRuleNames.filter((name) => timerRuleOf(name));
  const restored: RestoredWatchers = { recreated: 0, running: 0 };
  let after = "";
  while (!signal?.aborted) {
    const ids = await store.inactivity.watchedSubscriptionIds(after, restorePageSize, timerRules);
    const last = ids.at(-1);
    if (last === undefined) break;
    after = last;
    const subscriptions = await Promise.all(ids.map((id) => store.notifications.get(id)));
    const watches = (
      await Promise.all(
        subscriptions.map(async (subscription) => {
          if (!subscription) return [];
          return (await watchedWorkflows(store, subscription)).map((workflow) => ({
            subscription,
            workflowId: workflow.id,
            sinceMs: Math.max(subscription.updatedAt, workflow.createdAt),
          }));
        }),
      )
    ).flat();
    // A subscription to all workflows may add many: the starts go out a page at a time too.
    for (let from = 0; from < watches.length; from += restorePageSize) {
      const page = watches.slice(from, from + restorePageSize);
      const started = await Promise.all(page.map((watch) => startIfMissing(temporal, watch)));
      for (const fresh of started) restored[fresh ? "recreated" : "running"]++;
    }
  }
  return restored;
}

/** True when it started the watcher, false when one was running. */
async function startIfMissing(
  temporal: { client: Client; taskQueue?: string | undefined },
  {
    subscription,
    workflowId,
    sinceMs,
  }: { subscription: SubscriptionRecord; workflowId: string; sinceMs: number },
): Promise<boolean> {
  try {
    await temporal.client.workflow.start<typeof watchInactivity>("watchInactivity", {
      ...watcherOf(temporal, subscription, workflowId, sinceMs),
      workflowIdConflictPolicy: "FAIL",
    });
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw error;
  }
}

/** The live workflows a subscription selects (D18: all of them, current and future, or the ones named). */
async function watchedWorkflows(
  store: Store,
  subscription: SubscriptionRecord,
): Promise<{ id: string; createdAt: number }[]> {
  if (subscription.allWorkflows) return store.workflows.listWorkflows(subscription.workspaceId);
  const found = await Promise.all(subscription.workflowIds.map((id) => store.workflows.getWorkflow(id)));
  return found.flatMap((workflow) => (workflow && workflow.deletedAt === null ? [workflow] : []));
}

/**
 * One watcher's start: its fixed id, queue, input and search attributes, whoever starts it. A watcher is
 * notifications' work, so it runs on the deliveries' queue (issue 51); `temporal.taskQueue` names the
 * executions' queue, as everywhere in the API.
 */
function watcherOf(
  temporal: { taskQueue?: string | undefined },
  subscription: SubscriptionRecord,
  workflowId: string,
  sinceMs: number,
) {
  return {
    workflowId: inactivityWatchId(subscription.id, workflowId),
    taskQueue: deliveryTaskQueue(temporal.taskQueue ?? FLOWLOG_TASK_QUEUE),
    args: [{ subscriptionId: subscription.id, workflowId, sinceMs }] as [InactivityWatch],
    // The same attributes as the alert's deliveries: operators find both by subscription and workflow.
    typedSearchAttributes: deliverySearchAttributes({
      workspaceId: subscription.workspaceId,
      subscriptionId: subscription.id,
      workflowId,
    }),
    priority: workspacePriority(subscription.workspaceId),
  };
}

/** D18: "all workflows" includes future ones, so a new workflow gets the watchers of such subscriptions. */
export async function watchNewWorkflow(
  temporal: { client: Client; taskQueue?: string | undefined },
  store: Store,
  workspaceId: string,
  now: number,
): Promise<void> {
  const all = (await store.notifications.list(workspaceId)).filter(
    (subscription) => subscription.allWorkflows,
  );
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
  const subscriptions = await store.notifications.list(workflow.workspaceId);
  await Promise.all(
    subscriptions.map((subscription) =>
      client.workflow
        .getHandle(inactivityWatchId(subscription.id, workflow.id))
        .terminate(`workflow ${workflow.id} was deleted (D31)`)
        .catch((error: unknown) => {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
        }),
    ),
  );
}
