import { readFileSync } from "node:fs";
import type { Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { envDetectorSync, type IResource, Resource } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  type IdGenerator,
  NodeTracerProvider,
  RandomIdGenerator,
} from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import { repoPath } from "../util/repo-root.js";

/** The SDK of a process with tracing on (tracing.ts loads this module only then). */
export interface TracingSdk {
  resource: IResource;
  /** flowlog's tracer, looked up once: the provider's lookup builds a key string on every call. */
  tracer: Tracer;
  /**
   * Runs `start`, a span's start, with the trace and span ids given rather than random ones: an
   * execution's span, recorded when it ends under the ids its blocks named as their parent (tracing.ts).
   */
  withIds<T>(ids: { traceId: string; spanId: string }, start: () => T): T;
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
  const idGenerator = new ChosenIdGenerator();
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor], idGenerator });
  provider.register();
  return {
    resource,
    tracer: provider.getTracer("flowlog"),
    withIds: (ids, start) => idGenerator.with(ids, start),
    shutdown: () => provider.shutdown(),
  };
}

/**
 * Random ids, but for a span started inside `with`: the tracer asks for its span id (and, for a root, its
 * trace id) synchronously as the span starts, so the ids given are taken by that span alone.
 */
class ChosenIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private chosen: { traceId?: string; spanId?: string } = {};

  with<T>(ids: { traceId: string; spanId: string }, start: () => T): T {
    this.chosen = { ...ids };
    try {
      return start();
    } finally {
      this.chosen = {};
    }
  }

  generateTraceId(): string {
    const { traceId } = this.chosen;
    this.chosen.traceId = undefined;
    return traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    const { spanId } = this.chosen;
    this.chosen.spanId = undefined;
    return spanId ?? this.random.generateSpanId();
  }
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(repoPath("package.json"), "utf8")) as { version: string }).version;
}
