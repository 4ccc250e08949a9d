import { readFileSync } from "node:fs";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { envDetectorSync, type IResource, Resource } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider, type SpanProcessor } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import { repoPath } from "../util/repo-root.js";

/** The SDK of a process with tracing on (tracing.ts loads this module only then). */
export interface TracingSdk {
  /** The batch processor every span goes through, the Temporal workflows' spans too (temporal/tracing.ts). */
  spanProcessor: SpanProcessor;
  resource: IResource;
  /** Sends what is batched, then stops. */
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry's Node SDK configured by the standard variables, which its parts read themselves: the
 * exporter OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _TIMEOUT and _COMPRESSION (OTLP over HTTP
 * with protobuf bodies), the sampler OTEL_TRACES_SAMPLER(_ARG), the batch OTEL_BSP_*, the propagators
 * OTEL_PROPAGATORS (W3C trace context and baggage by default) and the resource OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES, which override flowlog's own service name. Registered globally, with
 * AsyncLocalStorage carrying the current span across awaits.
 */
export async function startTracingSdk(component: string): Promise<TracingSdk> {
  const resource = Resource.default()
    .merge(
      new Resource({
        [ATTR_SERVICE_NAME]: "flowlog",
        [ATTR_SERVICE_VERSION]: packageVersion(),
        "flowlog.component": component,
      }),
    )
    .merge(envDetectorSync.detect());
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  return { spanProcessor, resource, shutdown: () => provider.shutdown() };
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(repoPath("package.json"), "utf8")) as { version: string }).version;
}
