import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../config/config.js";
import { logger } from "../logging/logger.js";
import { ProcessMetrics } from "../logging/metrics.js";
import { archiveDayFor } from "../retention/archive.js";
import { Readiness } from "../server/health.js";
import { startProbeServer } from "../server/probe-server.js";
import { openConfiguredStore } from "../store/open-store.js";
import type { Store } from "../store/store.js";
import { type ActivityDeps, activityDepsFrom } from "../temporal/activities/deps.js";
import { retentionScheduleIdFor } from "../temporal/retention-schedule.js";
import { createFlowlogWorker, type FlowlogWorker } from "../temporal/worker.js";
import { freePort } from "../util/free-port.js";
import { untilStopSignal } from "./signals.js";
import { startCommandTracing } from "./tracing.js";

/** The longest wait between two tries to reach Temporal. */
const maxRetryMs = 30_000;

/**
 * `flowlog worker` (D3): the Temporal worker alone, against TEMPORAL_ADDRESS, over the configured store,
 * running the roles FLOWLOG_WORKER_ROLES names (issue 51: executions, deliveries or both). Its probes and
 * metrics (issue 16) answer from the start, on FLOWLOG_WORKER_PORT, and name its roles: alive at once,
 * ready once the store answers and the worker polls. A Temporal server that cannot be reached yet (a
 * cluster starting in any order, a server restarting) is tried again, at growing intervals, until it
 * answers or the process is told to stop.
 */
export async function runWorker(config: Config): Promise<void> {
  const address = config.temporalAddress ?? "localhost:7233";
  const stopTracing = await startCommandTracing("worker");
  const metrics = new ProcessMetrics("worker");
  metrics.workerRoles(config.workerRoles);
  const store = metrics.observeStore(await openConfiguredStore(config));
  // The SDK's own metrics (task slots, poll and schedule-to-start latencies) on a loopback port of their
  // own, appended to /metrics: one scrape target per process.
  const sdkMetricsAddress = `127.0.0.1:${await freePort()}`;
  metrics.includeSdkMetrics(`http://${sdkMetricsAddress}/metrics`);
  let worker: FlowlogWorker | undefined;
  const probes = await startProbeServer({
    port: config.workerPort,
    host: config.probeHost,
    variable: "FLOWLOG_WORKER_PORT",
    metrics,
    identity: { roles: config.workerRoles },
    readiness: new Readiness([
      { name: "store", check: () => store.ping() },
      // Polling its task queues: not while it connects, drains or has failed.
      {
        name: "temporal",
        check: async () => {
          const state = worker?.state() ?? "CONNECTING";
          if (state !== "RUNNING") throw new Error(`the worker is ${state}`);
        },
      },
    ]),
  });
  console.log(`flowlog worker probes and metrics at ${probes.url} (/healthz, /readyz, /metrics)`);
  const stop = new AbortController();
  const stopped = untilStopSignal().then(() => stop.abort());
  try {
    worker = await connect(config, address, { store, metrics, sdkMetricsAddress }, stop.signal);
    if (!worker) return;
    const running = worker.run();
    console.log(`Worker polling ${describeQueues(worker)} at ${address}`);
    await Promise.race([stopped, running]);
    worker.shutdown();
    await running;
  } finally {
    await probes.close();
    await store.close();
    await stopTracing();
  }
}

/** The worker, once Temporal answers; undefined when told to stop first. */
async function connect(
  config: Config,
  address: string,
  parts: { store: Store; metrics: ProcessMetrics; sdkMetricsAddress: string },
  signal: AbortSignal,
): Promise<FlowlogWorker | undefined> {
  for (let waitMs = 1_000; !signal.aborted; waitMs = Math.min(waitMs * 2, maxRetryMs)) {
    try {
      return await createFlowlogWorker({
        address,
        namespace: config.temporalNamespace,
        roles: config.workerRoles,
        deliveriesPerSecond: config.workerDeliveriesPerSecond,
        deps: workerDeps(config, parts.store, parts.metrics),
        sdkMetricsAddress: parts.sdkMetricsAddress,
        taskQueue: config.taskQueue,
        retentionScheduleId: retentionScheduleIdFor(config.taskQueue),
      });
    } catch (error) {
      // Only an unreachable server is waited for; anything else is a fault to report.
      if ((error as Error | undefined)?.name !== "TransportError") throw error;
      logger.warn({ address, retryInMs: waitMs }, "Temporal cannot be reached; trying again");
      await sleep(waitMs, undefined, { signal }).catch(() => undefined);
    }
  }
  return undefined;
}

/**
 * What a worker's activities run with (`flowlog worker` and `flowlog dev` alike): its configuration over
 * its store, and D42's archive when FLOWLOG_ARCHIVE_URL names one, which the retention purge then calls.
 */
export function workerDeps(config: Config, store: Store, metrics: ProcessMetrics): ActivityDeps {
  return { ...activityDepsFrom(config, store, metrics), archiveDay: archiveDayFor(config.archive, store) };
}

/** What the worker polls, for its log: "task queues flowlog (executions), flowlog-deliveries (deliveries)". */
export function describeQueues(worker: Pick<FlowlogWorker, "queues">): string {
  const queues = worker.queues.map(({ role, taskQueue }) => `${taskQueue} (${role})`);
  return `task queue${queues.length > 1 ? "s" : ""} ${queues.join(", ")}`;
}
