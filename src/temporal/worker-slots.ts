import type { Quotas } from "../limits/quotas.js";
import type { SlotLimits } from "../limits/workspace-slots.js";

/**
 * Workflow tasks one worker runs at once: the SDK's default, set explicitly (worker.ts) because the HTTP
 * block's first tries are sized from it.
 */
export const workflowTaskSlots = 40;

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
export const maxFirstTries = workflowTaskSlots / 4;

/**
 * Activity slots of each of a worker's two task queues (executions, deliveries): the SDK's default, set
 * explicitly (worker.ts) because the attempt slots below are sized from it.
 */
export const activityTaskSlots = 100;

/**
 * The slots of block activities (D26), or of delivery attempts, on one worker (limits/workspace-slots.ts): one
 * workspace's share, and what all of them may run (D26's `worker` quotas, at most the queue's activity
 * slots). With the defaults, 90 of the queue's 100 slots, so the executions' and fan-outs' own activities
 * always find one even when every block or endpoint hangs; of those 90, the workspaces already running
 * some hold at most 80 together, and the last 10 go to a workspace running none, so four or more tenants
 * at D26's 20 each cannot keep a fifth waiting.
 */
export function attemptSlotLimits(quotas: Quotas, perWorkspace: number): SlotLimits {
  const total = Math.min(quotas.worker.attemptSlots, activityTaskSlots);
  return { perWorkspace, total, reserve: total - Math.min(quotas.worker.busyWorkspaceSlots, total) };
}
