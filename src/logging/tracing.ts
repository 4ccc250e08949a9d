import {
  type Attributes,
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { TracingSdk } from "./tracing-sdk.js";

export type { Span };
export { SpanKind };

/**
 * OpenTelemetry traces (issue 55, item 5; D50): off unless the standard OTLP endpoint variables name
 * where to send them. Everything here is the API side, which costs a boolean test per call while tracing
 * is off: the SDK, the exporter and Temporal's interceptors load only when it is on (tracing-sdk.ts,
 * temporal/tracing.ts), so a process without the variables runs as it did before.
 *
 * Span attributes are chosen, never copied: ids, names, counts, codes, a host and port. No URL path or
 * query, no header, no config value and no error text from outside reaches one, so no secret can (D24).
 */
let sdk: TracingSdk | undefined;

/** Whether the environment asks for traces: an OTLP endpoint, and neither OTEL_SDK_DISABLED nor a "none" exporter. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/**
 * Starts the SDK when the environment asks for traces, once per process; `component` is the process's
 * role (serve, worker, dev), set as the resource's `flowlog.component`.
 */
export async function startTracing(component: string): Promise<TracingSdk | undefined> {
  if (sdk || !tracingRequested()) return sdk;
  sdk = await (await import("./tracing-sdk.js")).startTracingSdk(component);
  return sdk;
}

/** Whether spans are being made: the SDK started. */
export function tracingOn(): boolean {
  return sdk !== undefined;
}

/** The running SDK, for what needs its parts (the Temporal worker's workflow span sink); undefined when off. */
export function tracingSdk(): TracingSdk | undefined {
  return sdk;
}

/** Ends the SDK after sending the spans it holds; a stopping process calls it last. */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown();
}

const tracerName = "flowlog";

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  parent?: Context;
  errorType?: (error: unknown) => string;
}

/**
 * Runs `fn` in a new span, the current one's child (or `parent`'s), ending it when `fn` settles. A
 * rejection sets the span's status to error with `errorType` of the error (its name unless told) as
 * `error.type`, never its message, which may quote a remote answer. While tracing is off `fn` runs alone
 * and is given no span.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!sdk) return fn(undefined);
  const parent = options.parent ?? context.active();
  const span = trace.getTracer(tracerName).startSpan(name, options, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (error) {
      failSpan(span, options.errorType?.(error) ?? (error instanceof Error ? error.name : "error"));
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed for a reason of ours (a code, a kind), set as `error.type`. */
export function failSpan(span: Span | undefined, errorType: string): void {
  span?.setAttribute("error.type", errorType);
  span?.setStatus({ code: SpanStatusCode.ERROR });
}

/** The W3C trace context of the current span, written into outgoing headers (traceparent, tracestate). */
export function injectTraceContext(headers: { set(name: string, value: string): void }): void {
  if (!sdk) return;
  propagation.inject(context.active(), headers, { set: (carrier, key, value) => carrier.set(key, value) });
}

/** The context an incoming request's `traceparent` names, the current one when it names none. */
export function extractTraceContext(headers: { get(name: string): string | null }): Context {
  return propagation.extract(context.active(), headers, {
    get: (carrier, key) => carrier.get(key) ?? undefined,
    keys: () => ["traceparent", "tracestate"],
  });
}

/**
 * `trace_id` and `span_id` of the current span, for the JSON logs (logger.ts); none while off or outside
 * one. A new object each time: pino merges the line's own fields into it.
 */
export function traceFields(): { trace_id?: string; span_id?: string } {
  if (!sdk) return {};
  const current = trace.getActiveSpan()?.spanContext();
  if (!current || !trace.isSpanContextValid(current)) return {};
  return { trace_id: current.traceId, span_id: current.spanId };
}

/**
 * The trace of work handed to another part of this process by a key rather than a call: a log write
 * leaves its notifications to the outbox dispatcher (temporal/fan-out-outbox.ts), which starts them in
 * the execution's trace. Bounded: a key never taken (the intent was another process's) is forgotten.
 */
const carried = new Map<string, Context>();
const maxCarried = 10_000;

export function carryTraceContext(key: string): void {
  if (!sdk || !trace.getActiveSpan()) return;
  if (carried.size >= maxCarried) carried.delete(carried.keys().next().value as string);
  carried.set(key, context.active());
}

/** Runs `fn` in the context carried under `key`, if any, and forgets it. */
export function withCarriedTraceContext<T>(key: string, fn: () => T): T {
  const found = carried.get(key);
  if (found === undefined) return fn();
  carried.delete(key);
  return context.with(found, fn);
}
