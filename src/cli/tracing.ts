import { startTracing, stopTracing } from "../logging/tracing.js";

/**
 * D50: the long-running commands start tracing before anything that makes spans when the standard OTEL_*
 * variables ask for it, and end it last, after sending the spans still batched. Answers that end.
 */
export async function startCommandTracing(component: string): Promise<() => Promise<void>> {
  if (await startTracing(component)) {
    console.log("OpenTelemetry traces on: spans go to the OTLP endpoint the OTEL_* variables name");
  }
  return stopTracing;
}
