import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { InterceptingCall, type Interceptor } from "@grpc/grpc-js";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { requestUrl } from "../util/request-url.js";

type AnyRequest = IncomingMessage | Http2ServerRequest;
type AnyResponse = ServerResponse | Http2ServerResponse;
type Handler = (req: AnyRequest, res: AnyResponse) => void;

/** What a request came in as; a small fixed set, so the series stay few whatever clients send. */
export type Protocol = "grpc" | "grpc-web" | "connect" | "rest" | "other";

/**
 * Issue 16 (D32): Prometheus metrics of one process, on `GET /metrics` of its port. The process's own
 * figures (CPU, memory, event-loop delay, file descriptors, GC); for the API its requests by protocol and
 * status, its RPCs by procedure and code, the limits' refusals and its calls to Temporal; the store's
 * calls; for the worker its executions, deliveries and alerts, and the Temporal SDK's own series. Labels
 * are bounded sets (never a path, id or user), so a scraper's storage does not grow with traffic. One
 * instance per process, handed to what counts (the server, the activities' deps, the store's wrapper).
 */
export class ProcessMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: "flowlog_http_requests_total",
    help: "Requests answered, by protocol and HTTP status.",
    labelNames: ["protocol", "status"] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: "flowlog_http_request_duration_seconds",
    help: "Time from a request's arrival to the end of its answer, by protocol.",
    labelNames: ["protocol"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  private readonly rpcs = new Counter({
    name: "flowlog_rpc_requests_total",
    help: "RPCs answered (REST enters through the same handlers), by procedure, protocol and code.",
    labelNames: ["procedure", "protocol", "code"] as const,
    registers: [this.registry],
  });
  private readonly rpcDuration = new Histogram({
    name: "flowlog_rpc_duration_seconds",
    help: "Time an admitted RPC spent in its handler, by procedure and protocol.",
    labelNames: ["procedure", "protocol"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 300],
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: "flowlog_rate_limit_refusals_total",
    help: "Requests refused by a limit before they ran: the API bucket (D11) or the failed-authentication throttle (D26).",
    labelNames: ["limit"] as const,
    registers: [this.registry],
  });
  private readonly executions = new Counter({
    name: "flowlog_executions_total",
    help: "Executions logged, by trigger and outcome.",
    labelNames: ["trigger", "outcome"] as const,
    registers: [this.registry],
  });
  private readonly deliveryAttempts = new Counter({
    name: "flowlog_delivery_attempts_total",
    help: "Delivery attempts, by channel and outcome (succeeded, retrying, failed, lost with a worker).",
    labelNames: ["channel", "outcome"] as const,
    registers: [this.registry],
  });
  private readonly deliveries = new Counter({
    name: "flowlog_deliveries_total",
    help: "Deliveries that reached their end, by channel and outcome.",
    labelNames: ["channel", "outcome"] as const,
    registers: [this.registry],
  });
  private readonly held = new Counter({
    name: "flowlog_deliveries_held_total",
    help: "Deliveries whose series stopped before an attempt because their endpoint was held (D36), by channel.",
    labelNames: ["channel"] as const,
    registers: [this.registry],
  });
  private readonly drains = new Counter({
    name: "flowlog_drains_total",
    help: "Runs of a held endpoint's drain (D36), by how each ended: released (nothing left), held again, more to send, over (not draining).",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  private readonly drained = new Counter({
    name: "flowlog_drained_deliveries_total",
    help: "Held deliveries a drain sent (D36), by outcome.",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  private readonly roles = new Gauge({
    name: "flowlog_worker_role",
    help: "1 for each role the worker runs (issue 51): executions, deliveries.",
    labelNames: ["role"] as const,
    registers: [this.registry],
  });
  private readonly alerts = new Counter({
    name: "flowlog_alerts_total",
    help: "Alert rules that fired or resolved (D21, D34), by rule.",
    labelNames: ["rule", "transition"] as const,
    registers: [this.registry],
  });
  private readonly purged = new Counter({
    name: "flowlog_retention_entries_purged_total",
    help: "Log entries the retention purge deleted, with what depended on them (D41).",
    registers: [this.registry],
  });
  private readonly purges = new Counter({
    name: "flowlog_retention_runs_total",
    help: "Runs of the retention purge (D41), by outcome: ok, or failed when a workspace's purge failed.",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  private readonly purgeDuration = new Histogram({
    name: "flowlog_retention_run_duration_seconds",
    help: "Time from a retention purge run's start to its end (D41).",
    buckets: [0.1, 1, 5, 15, 60, 300, 900, 1800, 3600, 7200],
    registers: [this.registry],
  });
  private readonly purgeErrors = new Counter({
    name: "flowlog_retention_errors_total",
    help: "Workspaces whose purge failed after its retries, left for the next run (D41).",
    registers: [this.registry],
  });
  private readonly storeCalls = new Histogram({
    name: "flowlog_store_call_duration_seconds",
    help: "Time of each store call, by area and method, failed calls included.",
    labelNames: ["area", "method"] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [this.registry],
  });
  private readonly temporalCalls = new Histogram({
    name: "flowlog_temporal_call_duration_seconds",
    help: "Time of each call to Temporal's frontend (a sync execution's wait for its result included), by method and gRPC status.",
    labelNames: ["method", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });
  /** Where the Temporal SDK's own metrics are served (the worker's Core runtime), appended to /metrics. */
  private sdkMetricsUrl: string | undefined;

  constructor(component: "serve" | "worker" | "dev") {
    this.registry.setDefaultLabels({ component });
    collectDefaultMetrics({ register: this.registry, prefix: "flowlog_" });
  }

  /** An RPC's answer: `code` is Connect's code name, "ok" for a success. */
  rpcAnswered(procedure: string, protocol: string, code: string, seconds?: number): void {
    this.rpcs.inc({ procedure, protocol, code });
    if (seconds !== undefined) this.rpcDuration.observe({ procedure, protocol }, seconds);
  }

  refused(limit: "api" | "failed_authentications"): void {
    this.refusals.inc({ limit });
  }

  executionLogged(trigger: string, outcome: "success" | "error"): void {
    this.executions.inc({ trigger, outcome });
  }

  deliveryAttempted(channel: string, outcome: "succeeded" | "retrying" | "failed" | "lost"): void {
    this.deliveryAttempts.inc({ channel, outcome });
    if (outcome !== "retrying")
      this.deliveries.inc({ channel, outcome: outcome === "succeeded" ? "succeeded" : "failed" });
  }

  /** D36: a series found its endpoint held and stopped without an attempt. */
  deliveryHeld(channel: string): void {
    this.held.inc({ channel });
  }

  /** D36: a drain's run ended; `sent` of its deliveries ended succeeded or failed. */
  drainRan(
    outcome: "released" | "held" | "more" | "over",
    sent: { succeeded: number; failed: number },
  ): void {
    this.drains.inc({ outcome });
    this.drained.inc({ outcome: "succeeded" }, sent.succeeded);
    this.drained.inc({ outcome: "failed" }, sent.failed);
  }

  /** What the worker polls (FLOWLOG_WORKER_ROLES), so dashboards can tell its replicas apart. */
  workerRoles(roles: readonly string[]): void {
    for (const role of roles) this.roles.set({ role }, 1);
  }

  alerted(rule: string, transition: "fired" | "resolved"): void {
    this.alerts.inc({ rule, transition });
  }

  /** D41: a batch of the retention purge deleted `entries`. */
  entriesPurged(entries: number): void {
    this.purged.inc(entries);
  }

  /** D41: a purge run ended, after `seconds`, with `failed` workspaces left for the next. */
  purgeRan(seconds: number, failed: number): void {
    this.purges.inc({ outcome: failed === 0 ? "ok" : "failed" });
    this.purgeDuration.observe(seconds);
    this.purgeErrors.inc(failed);
  }

  /**
   * The store, each area's calls timed. Only the areas and their methods are labels: a bounded set the
   * code names, whatever the traffic.
   *
   * The timed areas are built once, here, so a call costs no lookup: no Proxy trap, no map of wrappers.
   */
  observeStore<S extends object>(store: S): S {
    // A store is a plain object of areas and functions (store.ts, postgres/store.ts).
    const observed: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(store)) {
      observed[name] = typeof value === "object" && value !== null ? this.timedArea(name, value) : value;
    }
    return observed as S;
  }

  /**
   * The area with each of its methods, own or inherited, timed, and run on the area itself (so its
   * private state is its own); its other members are read from it through the prototype chain. Areas are
   * classes with methods and no accessors, their set of methods fixed when the store is opened.
   */
  private timedArea(area: string, calls: object): object {
    const timed = Object.create(calls) as Record<string, unknown>;
    for (const method of methodNames(calls)) {
      const value = (calls as Record<string, unknown>)[method];
      if (typeof value !== "function") continue;
      timed[method] = this.timedCall(area, method, (args) => value.apply(calls, args));
    }
    return timed;
  }

  /**
   * The call, timed until it returns or, for a promise, until the promise settles. The caller gets the
   * call's own promise: timed through `finally`, it had a second promise to wait on, one more turn of the
   * microtask queue for each of a request's five store calls.
   */
  private timedCall(area: string, method: string, call: (args: unknown[]) => unknown) {
    // One labels object for every call: startTimer would copy its labels and read hrtime as an array per call.
    const labels = { area, method };
    return (...args: unknown[]) => {
      const started = process.hrtime.bigint();
      let result: unknown;
      try {
        result = call(args);
      } catch (error) {
        this.storeCallEnded(labels, started);
        throw error;
      }
      // Only timed here: a rejection stays the caller's to handle, on the promise it is given.
      if (result instanceof Promise) {
        const end = this.storeCallEnd(labels, started);
        result.then(end, end);
      } else this.storeCallEnded(labels, started);
      return result;
    };
  }

  /** Made per call, so returned rather than bound to a name (src/rpc/unary-context.ts says why). */
  private storeCallEnd(labels: { area: string; method: string }, started: bigint): () => void {
    return () => this.storeCallEnded(labels, started);
  }

  private storeCallEnded(labels: { area: string; method: string }, started: bigint): void {
    this.storeCalls.observe(labels, secondsSince(started));
  }

  /**
   * A gRPC interceptor for the Temporal client's connection: each call to the frontend timed by its
   * method (StartWorkflowExecution, GetWorkflowExecutionHistory, ...) and status code.
   */
  temporalInterceptor(): Interceptor {
    return (options, nextCall) => {
      const method = options.method_definition.path.slice(
        options.method_definition.path.lastIndexOf("/") + 1,
      );
      const end = this.temporalCalls.startTimer({ method });
      return new InterceptingCall(nextCall(options), {
        // A partial listener: gRPC passes the other events on as they are.
        start: (metadata, _listener, next) =>
          next(metadata, {
            onReceiveStatus: (status, nextStatus) => {
              end({ status: String(status.code) });
              nextStatus(status);
            },
          }),
      });
    };
  }

  /** The Temporal SDK's Prometheus endpoint, whose text `/metrics` appends to flowlog's own. */
  includeSdkMetrics(url: string): void {
    this.sdkMetricsUrl = url;
  }

  /** The handler, counting and timing each request it is given once its answer ends. */
  instrument<H extends Handler>(handler: H): H {
    const wrapped = (req: AnyRequest, res: AnyResponse) => {
      const record = this.requestRecorder(protocolOf(req), res);
      res.once("finish", record);
      res.once("close", record);
      handler(req, res);
    };
    return wrapped as H;
  }

  /**
   * Counts and times the request once, at the first of its answer's end and its close. Made per request,
   * so returned rather than bound to a name (src/rpc/unary-context.ts says why).
   */
  private requestRecorder(protocol: Protocol, res: AnyResponse): () => void {
    const started = process.hrtime.bigint();
    let recorded = false;
    return () => {
      if (recorded) return;
      recorded = true;
      this.requests.inc({ protocol, status: String(res.statusCode) });
      this.duration.observe({ protocol }, secondsSince(started));
    };
  }

  /** Answers `GET /metrics` in Prometheus's text format; false for any other request. */
  async answer(req: AnyRequest, res: AnyResponse, url = requestUrl(req)): Promise<boolean> {
    if (req.method !== "GET" || url.pathname !== "/metrics") return false;
    const sdk = this.sdkMetricsUrl
      ? await fetch(this.sdkMetricsUrl, { signal: AbortSignal.timeout(2_000) })
          .then((answer) => answer.text())
          .catch(() => "")
      : "";
    const body = `${await this.registry.metrics()}${sdk}`;
    res.writeHead(200, { "content-type": this.registry.contentType, "cache-control": "no-store" });
    res.end(body);
    return true;
  }
}

/** Seconds since `started`, a `process.hrtime.bigint()`: what every timer here observes. */
export function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** The names of an object's methods, own or inherited, up to Object's own. */
function methodNames(object: object): Set<string> {
  const names = new Set<string>();
  let at: object | null = object;
  while (at !== null && at !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(at)) {
      const descriptor = Object.getOwnPropertyDescriptor(at, name);
      if (name !== "constructor" && typeof descriptor?.value === "function") names.add(name);
    }
    at = Object.getPrototypeOf(at) as object | null;
  }
  return names;
}

export function protocolOf(req: AnyRequest): Protocol {
  const type = String(req.headers["content-type"] ?? "");
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  const path = req.url ?? "/";
  if (path.startsWith("/api/")) return "rest";
  if (req.headers["connect-protocol-version"] !== undefined || type.startsWith("application/connect")) {
    return "connect";
  }
  // Connect's unary calls may leave the version header out: a POST of JSON or protobuf to /package.Service/Method.
  if (/^\/[\w.]+\.\w+\/\w+/.test(path)) return "connect";
  return "other";
}
