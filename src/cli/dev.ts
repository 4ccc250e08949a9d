import type { Config } from "../config/config.js";
import { ProcessMetrics } from "../logging/metrics.js";
import { createApi } from "../server/api.js";
import { startApiServer } from "../server/api-server.js";
import { openConfiguredStore } from "../store/open-store.js";
import { lazyTemporalClient } from "../temporal/client.js";
import { ensureTemporal } from "../temporal/dev/ensure-temporal.js";
import { retentionScheduleIdFor } from "../temporal/retention-schedule.js";
import { createFlowlogWorker } from "../temporal/worker.js";
import { apiReadiness, startApiProbes } from "./probes.js";
import { untilStopSignal } from "./signals.js";
import { startCommandTracing } from "./tracing.js";
import { describeQueues, workerDeps } from "./worker.js";

/**
 * `flowlog dev` (D3): Temporal (a dev server unless TEMPORAL_ADDRESS is set), the API server and the
 * worker with both its roles (issue 51; FLOWLOG_WORKER_ROLES is `flowlog worker`'s) in one process, until
 * SIGINT or SIGTERM stops them in reverse order: the worker first, while the server it polls is still up,
 * then the API server, then Temporal. A second signal abandons the graceful stop; the dev server's exit
 * hook still ends Temporal.
 */
export async function runDev(config: Config): Promise<void> {
  // Listening from the start: a Ctrl-C during start-up lets start-up finish, then stops everything cleanly.
  const stopRequested = untilStopSignal();
  const stops: Array<() => Promise<void>> = [await startCommandTracing("dev")];
  try {
    const temporal = await ensureTemporal({
      address: config.temporalAddress,
      namespace: config.temporalNamespace,
      dataDir: config.dataDir,
      persistence: config.temporalDevDb,
    });
    stops.push(() => temporal.stop());
    console.log(
      temporal.uiUrl
        ? `Temporal dev server on ${temporal.address}, Web UI at ${temporal.uiUrl}`
        : `Temporal at ${temporal.address} (TEMPORAL_ADDRESS)`,
    );
    if (temporal.uiUrl && config.temporalDevDb === "memory") {
      console.log(
        "  Its state is in memory (FLOWLOG_TEMPORAL_DEV_DB=memory): executions in flight end with it.",
      );
    }

    // Issue 17: the console links executions to the dev server's own UI unless FLOWLOG_TEMPORAL_UI_URL says otherwise.
    const withTemporal: Config = {
      ...config,
      temporalAddress: temporal.address,
      temporalUiUrl: config.temporalUiUrl ?? temporal.uiUrl,
    };
    const metrics = new ProcessMetrics("dev");
    const store = metrics.observeStore(await openConfiguredStore(config));
    stops.push(async () => store.close());
    const client = lazyTemporalClient(temporal.address, config.temporalNamespace, [
      metrics.temporalInterceptor(),
    ]);
    const readiness = apiReadiness(store, client);
    const api = await startApiServer(withTemporal, {
      ...createApi({ config, store, temporal: { client, taskQueue: config.taskQueue } }),
      readiness,
      metrics,
    });
    stops.push(() => api.close());
    console.log(`flowlog API at ${api.url} (gRPC, gRPC-Web, Connect and REST on one port)`);
    console.log(`  Console:          ${api.url}/   (sign in with a key and workspace from bootstrap)`);
    console.log(`  OpenAPI document: ${api.url}/api/v1/openapi.json`);
    console.log("  Get an API key:   npm run flowlog -- bootstrap   (prints a user, a workspace and a key)");
    const probes = await startApiProbes(config, readiness, metrics);
    if (probes) stops.push(() => probes.close());

    const worker = await createFlowlogWorker({
      address: temporal.address,
      namespace: config.temporalNamespace,
      deliveriesPerSecond: config.workerDeliveriesPerSecond,
      deps: workerDeps(config, store, metrics),
      taskQueue: config.taskQueue,
      retentionScheduleId: retentionScheduleIdFor(config.taskQueue),
    });
    metrics.workerRoles(worker.queues.map(({ role }) => role));
    const running = worker.run();
    console.log(`Worker polling ${describeQueues(worker)}. Press Ctrl-C to stop.`);

    await Promise.race([stopRequested, running]);
    console.log("Stopping...");
    worker.shutdown();
    await running;
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}
