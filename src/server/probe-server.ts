import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ProcessMetrics } from "../logging/metrics.js";
import { createHealthRoutes, type ReadinessCheck } from "./health.js";
import { listenOn } from "./listen.js";

export interface ProbeServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Issue 16 (D32): `/healthz`, `/readyz` and `/metrics` for a process without an API port, `flowlog
 * worker`, so an orchestrator can probe it and Prometheus scrape it like `flowlog serve`. Nothing else
 * is served; every other path is 404.
 */
export async function startProbeServer(options: {
  port: number;
  host?: string;
  readiness: readonly ReadinessCheck[];
  metrics: ProcessMetrics;
}): Promise<ProbeServer> {
  const health = createHealthRoutes(options.readiness);
  const server = http.createServer(
    options.metrics.instrument(async (req, res) => {
      if ((await health(req, res)) || (await options.metrics.answer(req, res))) return;
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":"not found"}');
    }),
  );
  await listenOn(server, { port: options.port, host: options.host, variable: "FLOWLOG_WORKER_PORT" });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
