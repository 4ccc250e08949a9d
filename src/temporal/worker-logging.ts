import { DefaultLogger, type LogEntry, Runtime } from "@temporalio/worker";
import { logger } from "../logging/logger.js";

let installed = false;

/**
 * Routes the SDK's worker and Core logs into our one process logger (quiet under vitest, JSON in
 * production) instead of the SDK's own console output, and, given an address, serves the SDK's own
 * metrics there in Prometheus's format (issue 16: `flowlog worker` appends them to its /metrics). The SDK
 * runtime is a process-wide singleton that must be installed before the first NativeConnection, hence
 * once, from the worker factory.
 */
export function installWorkerLogging(sdkMetricsAddress?: string): void {
  if (installed) return;
  // The SDK's info lines (webpack bundle statistics, state changes) drown flowlog's own start-up
  // messages; they show when FLOWLOG_LOG_LEVEL is debug or trace. Never louder than the process's own
  // level: under vitest (silent) the failures tests provoke on purpose would bury a real one (issue 14).
  const level = logger.isLevelEnabled("debug") || !logger.isLevelEnabled("warn") ? logger.level : "warn";
  const temporalLogger = logger.child({ component: "temporal-worker" }, { level });
  const forward = ({ level, message, meta }: LogEntry) =>
    temporalLogger[level.toLowerCase() as Lowercase<typeof level>](meta ?? {}, message);
  Runtime.install({
    logger: new DefaultLogger("TRACE", forward),
    ...(sdkMetricsAddress
      ? { telemetryOptions: { metrics: { prometheus: { bindAddress: sdkMetricsAddress } } } }
      : {}),
  });
  installed = true;
}
