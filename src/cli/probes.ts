import type { Client } from "@temporalio/client";
import type { Config } from "../config/config.js";
import type { ProcessMetrics } from "../logging/metrics.js";
import { Readiness } from "../server/health.js";
import { type ProbeServer, startProbeServer } from "../server/probe-server.js";
import type { Store } from "../store/store.js";

/** What an API process needs to serve (issue 16): its store, and Temporal to run workflows. */
export function apiReadiness(store: Store, temporal: Pick<Client, "workflowService">): Readiness {
  return new Readiness([
    { name: "store", check: () => store.ping() },
    { name: "temporal", check: async () => void (await temporal.workflowService.getSystemInfo({})) },
  ]);
}

/**
 * D46: an API process's probes and metrics on FLOWLOG_PROBE_PORT, for orchestrators and scrapers that
 * hold no operator token; none when it is unset. Says where it listens.
 */
export async function startApiProbes(
  config: Pick<Config, "probePort" | "probeHost">,
  readiness: Readiness,
  metrics: ProcessMetrics,
): Promise<ProbeServer | undefined> {
  if (config.probePort === undefined) return undefined;
  const probes = await startProbeServer({
    port: config.probePort,
    host: config.probeHost,
    readiness,
    metrics,
    variable: "FLOWLOG_PROBE_PORT",
  });
  console.log(`  Probes and metrics: ${probes.url}   (/healthz, /readyz, /metrics)`);
  return probes;
}
