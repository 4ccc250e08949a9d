import { startTracing, stopTracing } from "../logging/tracing.js";
import { loadTemporalTracing } from "../temporal/tracing.js";

/**
 * D50: the long-running commands start tracing before anything that makes spans (the Temporal client and
 * worker take their interceptors when made) when the standard OTEL_* variables ask for it, and end it last,
 * after sending the spans still batched. Answers that end.
 */
export async function startCommandTracing(component: string): Promise<() => Promise<void>> {
  if (await startTracing(component)) {
    await loadTemporalTracing();
    console.log("OpenTelemetry traces on: spans go to the OTLP endpoint the OTEL_* variables name");
  }
  return stopTracing;
}
