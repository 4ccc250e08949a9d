import type { WorkerRole } from "../config/config.js";
import type { Quotas } from "../limits/quotas.js";
import type { SlotLimits } from "../limits/workspace-slots.js";

/** What one worker runs at once from one task queue. */
export interface QueueSlots {
  /** Workflow tasks: the HTTP block's first tries hold some (maxFirstTries). */
  workflowTasks: number;
  /** Activities: block or delivery attempts take most of them (attemptSlotLimits). */
  activities: number;
}

/**
 * Each role's task queue has its own slots (issue 51), so neither waits for one the other holds, even in
 * a process running both: executions, their block activities and log writes on one queue; fan-outs,
 * delivery attempts, redeliveries, test sends and the watchers that deliver on the other (D19: never in
 * an execution's path). Both are the SDK's defaults, set explicitly (worker.ts) because the figures
 * below are sized from them.
 */
export const queueSlots: Record<WorkerRole, QueueSlots> = {
  executions: { workflowTasks: 40, activities: 100 },
  deliveries: { workflowTasks: 40, activities: 100 },
};

/**
 * First tries of HTTP blocks running at once on one worker (issue 12). A first try is a local activity,
 * and a local activity keeps its execution's workflow task, and so one of the worker's workflow task
 * slots, until it ends: up to the block's request timeout (D16, 30 s by default). The SDK also keeps
 * some slots for its polls. With the cap at 50, above the slots, a worker stopped taking workflow tasks
 * once about 30 first tries waited on slow upstreams: eight workspaces with five blocks each, every one
 * within D26's cap, held every other execution on the worker for as long as their upstreams did, and
 * some of their own blocks were never sent (test/tenant-isolation.test.ts). A quarter of the slots
 * leaves the rest to everyone else, and it is far below the local activity slots (the SDK's 100), which
 * the store's reads and the log writes use too. Past it a block starts as a block activity, which waits
 * in Temporal and keeps no workflow task. The cap binds only on slow upstreams: with answers in
 * milliseconds even a busy worker has far fewer than ten first tries running at any moment, and against
 * a slow answer the activity's extra dispatch (tens of milliseconds) is small.
 */
export const maxFirstTries = queueSlots.executions.workflowTasks / 4;

/**
 * The slots of block activities (D26, on the executions' queue), or of delivery attempts (on the
 * deliveries'), on one worker (limits/workspace-slots.ts): one workspace's share, and what all of them
 * may run (D26's `worker` quotas, at most the queue's activity slots). With the defaults, 90 of the
 * queue's 100 slots, so the executions' and fan-outs' own activities always find one even when every
 * block or endpoint hangs; of those 90, the workspaces already running some hold at most 80 together,
 * and the last 10 go to a workspace running none, so four or more tenants at D26's 20 each cannot keep a
 * fifth waiting.
 */
export function attemptSlotLimits(quotas: Quotas, perWorkspace: number, role: WorkerRole): SlotLimits {
  const total = Math.min(quotas.worker.attemptSlots, queueSlots[role].activities);
  return { perWorkspace, total, reserve: total - Math.min(quotas.worker.busyWorkspaceSlots, total) };
}

/**
 * The SDK's options for one role's queue: its slots and, for deliveries, the operator's pace
 * (FLOWLOG_WORKER_DELIVERY_PACE), the activities this worker starts from that queue per second
 * at most. A drain of held deliveries then takes at most that share of a process that also runs
 * executions; unset, the slots alone bound it. The activities a fan-out's task schedules would otherwise
 * come straight back to the worker that completed it (eager execution), past the pace: a paced worker
 * takes none that way.
 */
export function queueWorkerOptions(role: WorkerRole, deliveriesPerSecond: number | undefined) {
  const slots = queueSlots[role];
  return {
    maxConcurrentWorkflowTaskExecutions: slots.workflowTasks,
    maxConcurrentActivityTaskExecutions: slots.activities,
    ...(role === "deliveries" && deliveriesPerSecond !== undefined
      ? { maxActivitiesPerSecond: deliveriesPerSecond, maxEagerActivityReservationsPerWorkflowTask: 0 }
      : {}),
  };
}
