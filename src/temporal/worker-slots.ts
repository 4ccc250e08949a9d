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
