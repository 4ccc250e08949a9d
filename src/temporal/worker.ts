import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@temporalio/client";
import {
  bundleWorkflowCode,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundleOption,
} from "@temporalio/worker";
import { type WorkerRole, workerRoles } from "../config/config.js";
import { logger } from "../logging/logger.js";
import type { Store } from "../store/store.js";
import { type ActivityDeps, createActivities } from "./activities/index.js";
import { FanOutOutbox } from "./fan-out-outbox.js";
import { ensureRetentionSchedule } from "./retention-schedule.js";
import { restoreInactivityWatchers } from "./start-inactivity-watch.js";
import { FLOWLOG_TASK_QUEUE, roleTaskQueue } from "./task-queue.js";
import { installWorkerLogging } from "./worker-logging.js";
import { queueWorkerOptions } from "./worker-slots.js";

export interface FlowlogWorkerOptions {
  address: string;
  namespace: string;
  /**
   * The executions' queue, which names the deliveries' (delivery-ids.ts). Tests pass their own so parallel
   * test files never take each other's tasks.
   */
  taskQueue?: string;
  /** Issue 51: the queues this worker polls (FLOWLOG_WORKER_ROLES); both unless told. */
  roles?: readonly WorkerRole[];
  /** Issue 51: the deliveries' pace on this worker (FLOWLOG_WORKER_DELIVERY_PACE); none unless told. */
  deliveriesPerSecond?: number | undefined;
  /** What the activities use: the store, the D22 setting, the model prices. */
  deps: ActivityDeps;
  /**
   * How long a workflow task waits for the worker that last ran the workflow before any worker may take
   * it (the SDK's default is 10 s). Tests that kill a worker shorten it.
   */
  stickyQueueScheduleToStartTimeoutMs?: number;
  /**
   * How long a stopping worker waits for what it runs before cancelling it (issue 16; 30 s unless told).
   * Tests that stop a worker in the middle of blocks that never end shorten it.
   */
  shutdownGraceMs?: number;
  /** host:port where the SDK serves its own Prometheus metrics (issue 16); none when absent. */
  sdkMetricsAddress?: string;
  /**
   * The workflows' bundle, when the caller has one: tests running the sources take the build's, made once
   * per run, instead of bundling in every worker they start.
   */
  workflowBundle?: WorkflowBundleOption;
  /**
   * D41: the Schedule of the retention purge, created or updated at start under this id by a worker with
   * the executions role, whose queue runs the purge. `flowlog worker` and `flowlog dev` pass
   * retentionScheduleId; tests pass their own or none, so no purge runs over their stores unasked.
   */
  retentionScheduleId?: string;
}

export interface FlowlogWorker {
  /** Polls until `shutdown()` (or a fatal error), then closes the connection. */
  run(): Promise<void>;
  /** Starts a graceful stop; a no-op unless running. */
  shutdown(): void;
  /** RUNNING while every queue's worker polls; otherwise the state of the first one that does not. */
  state(): string;
  /** What it runs: each role with the task queue it polls. */
  readonly queues: readonly { role: WorkerRole; taskQueue: string }[];
}

/**
 * The workflows' code for Temporal's sandbox. Compiled (`dist/js/`, how `flowlog serve|worker|dev` run),
 * `scripts/build.mjs` has bundled it once beside this module, so a worker starts without webpack; from
 * the sources (tests under tsx) it is bundled at start, and the SDK's bundler maps our `.js` import suffixes
 * back to `.ts` files. Traced or not, the workflows run alike: their spans are made by the activities (D50).
 */
const thisFile = fileURLToPath(import.meta.url);
const workflowsPath = path.join(path.dirname(thisFile), "workflows", `index${path.extname(thisFile)}`);

async function workflowCode(): Promise<WorkflowBundleOption> {
  const prebuilt = path.join(path.dirname(thisFile), "workflow-bundle.js");
  if (path.extname(thisFile) === ".js" && existsSync(prebuilt)) return { codePath: prebuilt };
  return bundleWorkflowCode({
    workflowsPath,
    logger: Runtime.instance().logger,
  });
}

const defaultShutdownGraceMs = 30_000;
/**
 * Long enough for a handed-over first try's workflow task to complete before the grace time ends; half of
 * a shorter grace time.
 */
const firstTryHandOverMarginMs = 5_000;
/**
 * How often the outbox's dispatcher looks for intents when no log write of its own process wakes it: in
 * a worker with the deliveries role alone, every execution's notifications wait for this look.
 */
const unwokenOutboxLookMs = 50;
/** An executions-only worker's log writes leave their intents to the deliveries' workers. */
const noDispatcher = { wake() {} };

export async function createFlowlogWorker(options: FlowlogWorkerOptions): Promise<FlowlogWorker> {
  installWorkerLogging(options.sdkMetricsAddress);
  const connection = await NativeConnection.connect({ address: options.address });
  const closeConnections = () => connection.close();
  try {
    // The activities' own client, for the workflows they start (the notification fan-out). On the workers'
    // connection, a start may ask for eager execution: the server hands the new workflow's first task
    // straight back to this process when it has a free slot, skipping a trip through matching.
    const client = new Client({ connection, namespace: options.namespace });
    const taskQueue = options.taskQueue ?? FLOWLOG_TASK_QUEUE;
    const roles = workerRoles.filter((role) => (options.roles ?? workerRoles).includes(role));
    if (roles.length === 0) throw new Error("a worker needs a role: executions, deliveries or both");
    const delivers = roles.includes("deliveries");
    // Every role's worker registers every workflow and activity, so whatever an earlier version left on
    // a queue (a no-activity watcher started on the executions' queue) still finishes there; the roles
    // only choose which queues this process polls (issue 51).
    const workflowBundle = options.workflowBundle ?? (await workflowCode());
    // The outbox hands an execution's notifications from the executions' side to the deliveries': its
    // dispatcher runs with the deliveries role, makes an entry's deliveries as the fan-out's own activity
    // would, then starts it. Sharing a process with executions, it is woken by their log writes.
    const fanOuts = delivers
      ? new FanOutOutbox(
          options.deps.store,
          client,
          (logId) => activities.prepareDeliveries({ logId }),
          roles.includes("executions") ? {} : { idleMs: unwokenOutboxLookMs },
        )
      : undefined;
    const stopping = new AbortController();
    const activities = createActivities(options.deps, client, fanOuts ?? noDispatcher, stopping.signal);
    const queues = roles.map((role) => ({ role, taskQueue: roleTaskQueue(role, taskQueue) }));
    const shutdownGraceMs = options.shutdownGraceMs ?? defaultShutdownGraceMs;
    const handOverAfterMs = shutdownGraceMs - Math.min(firstTryHandOverMarginMs, shutdownGraceMs / 2);
    const workerOn = ({ role, taskQueue: queue }: (typeof queues)[number]) =>
      Worker.create({
        connection,
        namespace: options.namespace,
        taskQueue: queue,
        workflowBundle,
        activities,
        // Issue 16: a stopping worker lets its running activities finish (a delivery attempt lasts at most
        // 30 s, D19); what is still running then is cancelled and retried by Temporal on another worker.
        shutdownGraceTime: shutdownGraceMs,
        // Each queue's own slots, and the deliveries' pace (worker-slots.ts).
        ...queueWorkerOptions(role, options.deliveriesPerSecond),
        ...(options.stickyQueueScheduleToStartTimeoutMs === undefined
          ? {}
          : { stickyQueueScheduleToStartTimeout: options.stickyQueueScheduleToStartTimeoutMs }),
      });
    const workers: Worker[] = [];
    for (const queue of queues) workers.push(await workerOn(queue));
    const executions = queues.find((queue) => queue.role === "executions");
    if (executions && options.retentionScheduleId !== undefined) {
      await ensureRetentionSchedule(client, executions.taskQueue, options.retentionScheduleId);
    }
    let handingOver: NodeJS.Timeout | undefined;
    const shutdown = () => {
      for (const worker of workers) if (worker.getState() === "RUNNING") worker.shutdown();
      // First tries of HTTP blocks are local activities, which the SDK neither cancels at the grace time
      // nor lets the worker stop without: they hand over to another worker before it (issue 12).
      handingOver ??= setTimeout(() => stopping.abort(), handOverAfterMs);
    };
    return {
      // One queue's worker failing stops the others, and the connection closes only once all have stopped.
      async run() {
        // The no-activity watchers are the deliveries' (start-inactivity-watch.ts).
        const stopRestoring = new AbortController();
        const restoring = delivers
          ? restoreWatchers({ client, taskQueue }, options.deps.store, stopRestoring.signal)
          : undefined;
        // The outbox's starts go out on this connection, so they finish before it closes.
        const stopDispatching = new AbortController();
        const dispatching = fanOuts?.run(stopDispatching.signal);
        try {
          const results = await Promise.allSettled(
            workers.map((worker) =>
              worker.run().catch((error: unknown) => {
                shutdown();
                throw error;
              }),
            ),
          );
          const failed = results.find((result) => result.status === "rejected");
          if (failed) throw failed.reason;
        } finally {
          clearTimeout(handingOver);
          stopRestoring.abort();
          stopDispatching.abort();
          await Promise.all([restoring, dispatching]);
          await closeConnections();
        }
      },
      shutdown,
      state: () =>
        workers.map((worker) => worker.getState()).find((state) => state !== "RUNNING") ?? "RUNNING",
      queues,
    };
  } catch (error) {
    await closeConnections();
    throw error;
  }
}

/**
 * Issue 18, item 4: every worker start brings back the no-activity watchers that should run and do not
 * (terminated by hand, lost with a restored Temporal database). It runs beside polling, never before it,
 * and a failure is logged, not fatal: the watchers already running are unaffected.
 */
async function restoreWatchers(
  temporal: { client: Client; taskQueue: string },
  store: Store,
  signal: AbortSignal,
): Promise<void> {
  try {
    const { recreated, running } = await restoreInactivityWatchers(temporal, store, signal);
    logger.info({ recreated, running }, `no-activity watchers: ${recreated} re-created, ${running} running`);
  } catch (error) {
    if (!signal.aborted) logger.warn({ err: error }, "no-activity watchers could not be restored");
  }
}
