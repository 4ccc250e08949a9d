import type { Config } from "../config/config.js";
import { ProcessMetrics } from "../logging/metrics.js";
import { createApi } from "../server/api.js";
import { startApiServer } from "../server/api-server.js";
import { openConfiguredStore } from "../store/open-store.js";
import { lazyTemporalClient } from "../temporal/client.js";
import { apiReadiness, startApiProbes } from "./probes.js";
import { untilStopSignal } from "./signals.js";
import { startCommandTracing } from "./tracing.js";

/** `flowlog serve` (D3): the API server alone, until SIGINT or SIGTERM. */
export async function runServe(config: Config): Promise<void> {
  const stopTracing = await startCommandTracing("serve");
  const metrics = new ProcessMetrics("serve");
  const store = metrics.observeStore(await openConfiguredStore(config));
  const client = lazyTemporalClient(config.temporalAddress ?? "localhost:7233", config.temporalNamespace, [
    metrics.temporalInterceptor(),
  ]);
  const readiness = apiReadiness(store, client);
  const api = await startApiServer(config, {
    ...createApi({ config, store, temporal: { client, taskQueue: config.taskQueue } }),
    readiness,
    metrics,
  });
  console.log(
    `flowlog API at ${api.url} (gRPC, gRPC-Web, Connect and REST; OpenAPI at ${api.url}/api/v1/openapi.json)`,
  );
  const probes = await startApiProbes(config, readiness, metrics);
  await untilStopSignal();
  await probes?.close();
  await api.close();
  await store.close();
  await stopTracing();
}
