import http from "node:http";
import type { ProcessMetrics } from "../logging/metrics.js";
import { createHealthRoutes, type Readiness } from "./health.js";
import { listeningUrl, listenOn } from "./listen.js";

export interface ProbeServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Issue 16 (D32, D46): `/healthz`, `/readyz` and `/metrics` on a port of their own, open to whoever
 * reaches it, so an orchestrator can probe a process and Prometheus scrape it: `flowlog worker`'s only
 * port, and `flowlog serve`'s FLOWLOG_PROBE_PORT. It listens on loopback unless FLOWLOG_PROBE_HOST says
 * otherwise. Nothing else is served; every other path is 404.
 */
export async function startProbeServer(options: {
  port: number;
  host: string;
  /** The process's readiness, shared with its API port's `/readyz` where it has one. */
  readiness: Readiness;
  /** What `/readyz` says the process is beside its verdict: a worker's roles. */
  identity?: Record<string, unknown>;
  metrics: ProcessMetrics;
  /** The variable that sets the port, named when it is taken. */
  variable: string;
}): Promise<ProbeServer> {
  const health = createHealthRoutes(options.readiness, options.identity);
  const server = http.createServer(
    options.metrics.instrument(async (req, res) => {
      if ((await health(req, res)) || (await options.metrics.answer(req, res))) return;
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":"not found"}');
    }),
  );
  await listenOn(server, { port: options.port, host: options.host, variable: options.variable });
  return {
    url: listeningUrl(server).url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
