import { createHash } from "node:crypto";
import {
  type Attributes,
  type Context,
  context,
  createTraceState,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import type { TracingSdk } from "./tracing-sdk.js";

export type { Span };
export { SpanKind };

/**
 * OpenTelemetry traces (issue 55, item 5; D50): off unless the standard OTLP endpoint variables name
 * where to send them. Everything here is the API side, which costs a boolean test per call while tracing
 * is off: the SDK and the exporter load only when it is on (tracing-sdk.ts), so a process without the
 * variables runs as it did before. Across Temporal the context travels in flowlog's own data (TraceCarrier).
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

/** Ends the SDK after sending the spans it holds; a stopping process calls it last. */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown();
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  parent?: Context;
  errorType?: (error: unknown) => string;
  /** Sets what only the outcome tells (an answer's code) as `fn` settles, before the span ends. */
  settled?: (span: Span, outcome: { ok: true } | { ok: false; error: unknown }) => void;
}

/**
 * Runs `fn` in a new span, the current one's child (or `parent`'s), ending it when `fn` settles. A
 * rejection sets the span's status to error with `errorType` of the error (its name unless told) as
 * `error.type`, never its message, which may quote a remote answer. While tracing is off `fn` runs alone
 * and is given no span.
 *
 * One reaction on `fn`'s promise ends the span, rather than an async wrapper around it: a server span is
 * made per RPC, and on Node 20 every promise pays AsyncLocalStorage's promise hooks once tracing is on
 * (bench/README.md, known bounds), so the wrapper's promises cost more than its lines.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!sdk) return fn(undefined);
  const parent = options.parent ?? context.active();
  const span = sdk.tracer.startSpan(name, options, parent);
  let running: Promise<T>;
  try {
    running = context.with(trace.setSpan(parent, span), fn, undefined, span);
  } catch (error) {
    running = Promise.reject(error);
  }
  return running.then(
    (result) => {
      options.settled?.(span, { ok: true });
      span.end();
      return result;
    },
    (error: unknown) => {
      options.settled?.(span, { ok: false, error });
      failSpan(span, options.errorType?.(error) ?? (error instanceof Error ? error.name : "error"));
      span.end();
      throw error;
    },
  );
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

/** How the propagators read an incoming request's headers: made once, not per request. */
const headerGetter = {
  get: (carrier: { get(name: string): string | null }, key: string) => carrier.get(key) ?? undefined,
  keys: () => ["traceparent", "tracestate"],
};

/** The context an incoming request's `traceparent` names, the current one when it names none. */
export function extractTraceContext(headers: { get(name: string): string | null }): Context {
  return propagation.extract(context.active(), headers, headerGetter);
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
 * D50: a W3C trace context as it travels in data of flowlog's own rather than in headers: an execution's
 * start arguments (ExecutionInput.traceContext), the notification outbox's intent, a delivery's input.
 */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a carrier names, or undefined when its traceparent is not a valid W3C version 00 one. */
function spanContextOf(carrier: TraceCarrier | undefined): SpanContext | undefined {
  const match = carrier && traceparentPattern.exec(carrier.traceparent);
  if (!match) return undefined;
  const found: SpanContext = {
    traceId: match[1] as string,
    spanId: match[2] as string,
    traceFlags: Number.parseInt(match[3] as string, 16) & TraceFlags.SAMPLED,
    isRemote: true,
    ...(carrier?.tracestate ? { traceState: createTraceState(carrier.tracestate) } : {}),
  };
  return trace.isSpanContextValid(found) ? found : undefined;
}

function carrierOf(span: SpanContext): TraceCarrier {
  const flags = (span.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, "0");
  const tracestate = span.traceState?.serialize();
  return { traceparent: `00-${span.traceId}-${span.spanId}-${flags}`, ...(tracestate ? { tracestate } : {}) };
}

/**
 * The current span as a carrier, for work that leaves this process in data of ours (an execution's start);
 * undefined while tracing is off or outside a span. Written in W3C's format whatever OTEL_PROPAGATORS says:
 * it is read back only by flowlog.
 */
export function currentTraceCarrier(): TraceCarrier | undefined {
  if (!sdk) return undefined;
  const current = trace.getActiveSpan()?.spanContext();
  return current && trace.isSpanContextValid(current) ? carrierOf(current) : undefined;
}

/**
 * The context of an execution's span, made from its id and its caller's carrier alone: every activity of
 * the execution, in whichever worker process, names the same span as its parent, and the log write
 * records that span at the end, with the execution's start and end times (recordExecutionSpan). So the
 * workflow itself makes no span and carries nothing but the caller's carrier (D50). An execution without
 * a caller's trace (a schedule's run, a caller without tracing) is a trace of its own, its id derived the
 * same way, sampled.
 */
function executionSpanContext(executionId: string, caller: TraceCarrier | undefined): SpanContext {
  const parent = spanContextOf(caller);
  const digest = createHash("sha256")
    .update(executionId)
    .update(parent?.traceId ?? "")
    .digest("hex");
  return {
    traceId: parent?.traceId ?? digest.slice(0, 32),
    spanId: digest.slice(32, 48),
    traceFlags: parent?.traceFlags ?? TraceFlags.SAMPLED,
    isRemote: true,
    ...(parent?.traceState ? { traceState: parent.traceState } : {}),
  };
}

/** The context whose current span is the execution's: the parent of its blocks' spans. */
export function executionContext(executionId: string, caller: TraceCarrier | undefined): Context {
  if (!sdk) return context.active();
  return trace.setSpanContext(ROOT_CONTEXT, executionSpanContext(executionId, caller));
}

/** The execution's span as a carrier, for its notifications, which run after it and elsewhere. */
export function executionCarrier(
  executionId: string,
  caller: TraceCarrier | undefined,
): TraceCarrier | undefined {
  return sdk ? carrierOf(executionSpanContext(executionId, caller)) : undefined;
}

/** Runs `fn` with the span a carrier names as the current one (a delivery's parent), if it names one. */
export function inCarriedContext<T>(carrier: TraceCarrier | undefined, fn: () => T): T {
  const found = sdk ? spanContextOf(carrier) : undefined;
  return found ? context.with(trace.setSpanContext(ROOT_CONTEXT, found), fn) : fn();
}

export interface ExecutionSpan {
  executionId: string;
  caller: TraceCarrier | undefined;
  name: string;
  attributes: Attributes;
  startedAt: number;
  endedAt: number;
  errorType?: string;
}

/**
 * Records an execution's span once it has ended, under the ids its blocks already named as their parent
 * (executionSpanContext), the caller's span its parent. The log write calls it: a write run again (a
 * retried local activity) records it again under the same ids, which a backend keeps as one.
 */
export function recordExecutionSpan(execution: ExecutionSpan): void {
  if (!sdk) return;
  const own = executionSpanContext(execution.executionId, execution.caller);
  const callerSpan = spanContextOf(execution.caller);
  const parent = callerSpan ? trace.setSpanContext(ROOT_CONTEXT, callerSpan) : ROOT_CONTEXT;
  const { tracer } = sdk;
  const span = sdk.withIds(own, () =>
    tracer.startSpan(
      execution.name,
      { attributes: execution.attributes, startTime: execution.startedAt },
      parent,
    ),
  );
  if (execution.errorType !== undefined) failSpan(span, execution.errorType);
  span.end(execution.endedAt);
}
