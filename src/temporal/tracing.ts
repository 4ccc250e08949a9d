import { createRequire } from "node:module";
import type { Resource } from "@opentelemetry/resources";
import type { WorkflowClientInterceptor } from "@temporalio/client";
import type { WorkerOptions } from "@temporalio/worker";
import { tracingSdk } from "../logging/tracing.js";

type TemporalOpenTelemetry = typeof import("@temporalio/interceptors-opentelemetry");

let loaded: TemporalOpenTelemetry | undefined;

/**
 * D50: Temporal's own OpenTelemetry interceptors, loaded once tracing is on (the commands call this after
 * `startTracing`) and never otherwise. The client's put the caller's span into a workflow's start (the
 * `_tracer-data` header), the workflow's carry it to the activities, and the activities' run in it, so
 * one trace goes from the API call through the workflow to the blocks and the deliveries, across
 * processes (`flowlog serve` beside `flowlog worker`).
 */
export async function loadTemporalTracing(): Promise<void> {
  if (tracingSdk() && !loaded) loaded = await import("@temporalio/interceptors-opentelemetry");
}

/** The workflow client's interceptors: a span per start, signal or query; none while tracing is off. */
export function tracedClientInterceptors(): { workflow: WorkflowClientInterceptor[] } | undefined {
  return loaded && { workflow: [new loaded.OpenTelemetryWorkflowClientInterceptor()] };
}

/**
 * A worker's activity interceptors and the sink its workflows' spans leave the sandbox by, into the
 * process's span processor; undefined while tracing is off. The workflows' side is bundled with their
 * code (tracedWorkflowInterceptors).
 */
export function tracedWorkerOptions(): Pick<WorkerOptions, "interceptors" | "sinks"> | undefined {
  const sdk = tracingSdk();
  if (!loaded || !sdk) return undefined;
  const otel = loaded;
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: otel.makeWorkflowExporter(sdk.spanProcessor, sdk.resource as Resource) },
  };
}

/** The module of the workflow-side interceptors, for the traced workflow bundle (scripts/build.mjs, worker.ts). */
export function tracedWorkflowInterceptors(): string {
  return createRequire(import.meta.url).resolve(
    "@temporalio/interceptors-opentelemetry/lib/workflow-interceptors",
  );
}
