import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type GoBinary, resolveGoBinary } from "../../src/tools/go-binary.js";
import { freePort } from "../../src/util/free-port.js";
import { until } from "./until.js";

/**
 * Jaeger v2 (an OpenTelemetry Collector distribution: OTLP in, its query API out), the trace backend the
 * tracing tests send flowlog's spans to (issue 55, item 5). Its module's go.mod has replace directives,
 * which `go install` refuses, so it is built in the module's own directory.
 */
export const jaeger: GoBinary = {
  name: "jaeger",
  module: "github.com/jaegertracing/jaeger/cmd/jaeger",
  moduleRoot: "github.com/jaegertracing/jaeger",
  version: "v1.75.0",
  withoutGo: "Install Jaeger v2 (the jaeger binary), or Go to let the tests build it.",
  buildTime: "several minutes",
};

export function resolveJaeger(): Promise<string> {
  return resolveGoBinary(jaeger);
}

/** One span as Jaeger's query API answers it (`/api/traces/{id}`), its tags as a record. */
export interface JaegerSpan {
  traceId: string;
  spanId: string;
  /** The span this one is the child of, none for the trace's root. */
  parentId: string | undefined;
  name: string;
  serviceName: string;
  tags: Record<string, unknown>;
}

export interface JaegerServer {
  /** Where OTLP over HTTP goes: OTEL_EXPORTER_OTLP_ENDPOINT. */
  otlpEndpoint: string;
  /** The spans Jaeger holds of the trace, none when it has not received it. */
  trace(traceId: string): Promise<JaegerSpan[]>;
  /** The raw answer of the query API for the trace, every byte of what Jaeger stored. */
  rawTrace(traceId: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Jaeger all in one on loopback ports of its own: OTLP over HTTP in, traces in memory, the query API out,
 * nothing else (no Prometheus port of its own, which would clash with a neighbour's).
 */
export async function startJaeger(): Promise<JaegerServer> {
  const binary = await resolveJaeger();
  const [otlpPort, queryPort, queryGrpcPort] = [await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(path.join(tmpdir(), "flowlog-jaeger-"));
  const config = path.join(dir, "config.yaml");
  writeFileSync(config, jaegerConfig(otlpPort, queryPort, queryGrpcPort));
  const child = spawn(binary, ["--config", config], { stdio: ["ignore", "ignore", "pipe"] });
  let errors = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    errors = (errors + chunk).slice(-4000);
  });
  const exited = once(child, "exit");
  const queryUrl = `http://127.0.0.1:${queryPort}`;
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(
      "Jaeger's query API",
      async () => {
        if (child.exitCode !== null) throw new Error(`jaeger exited: ${errors}`);
        return (await fetch(`${queryUrl}/api/services`).catch(() => undefined))?.ok || undefined;
      },
      60_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const rawTrace = async (traceId: string) => {
    const answer = await fetch(`${queryUrl}/api/traces/${traceId}`);
    return answer.status === 404 ? "" : await answer.text();
  };
  return {
    otlpEndpoint: `http://127.0.0.1:${otlpPort}`,
    rawTrace,
    trace: async (traceId) => {
      const raw = await rawTrace(traceId);
      return raw === "" ? [] : spansOf(JSON.parse(raw) as JaegerTraces);
    },
    stop,
  };
}

function jaegerConfig(otlpPort: number, queryPort: number, queryGrpcPort: number): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memory_store
    http:
      endpoint: 127.0.0.1:${queryPort}
    grpc:
      endpoint: 127.0.0.1:${queryGrpcPort}
  jaeger_storage:
    backends:
      memory_store:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlpPort}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memory_store
`;
}

interface JaegerTraces {
  data: Array<{
    spans: Array<{
      traceID: string;
      spanID: string;
      operationName: string;
      processID: string;
      references: Array<{ refType: string; spanID: string }>;
      tags: Array<{ key: string; value: unknown }>;
    }>;
    processes: Record<string, { serviceName: string }>;
  }>;
}

function spansOf(answer: JaegerTraces): JaegerSpan[] {
  return answer.data.flatMap((trace) =>
    trace.spans.map((span) => ({
      traceId: span.traceID,
      spanId: span.spanID,
      parentId: span.references.find((reference) => reference.refType === "CHILD_OF")?.spanID,
      name: span.operationName,
      serviceName: trace.processes[span.processID]?.serviceName ?? "",
      tags: Object.fromEntries(span.tags.map((tag) => [tag.key, tag.value])),
    })),
  );
}
