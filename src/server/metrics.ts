import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";
import type { NodeRequest, NodeResponse } from "../gateway/rest-gateway.js";

type AnyRequest = IncomingMessage | Http2ServerRequest;
type AnyResponse = ServerResponse | Http2ServerResponse;
type Handler = (req: AnyRequest, res: AnyResponse) => void;

/** What a request came in as; a small fixed set, so the series stay few whatever clients send. */
export type Protocol = "grpc" | "grpc-web" | "connect" | "rest" | "other";

/**
 * Issue 16 (D32): Prometheus metrics of one process, on `GET /metrics` of its port. The process's own
 * figures (CPU, memory, event-loop delay, file descriptors, GC) and, for the API, its requests: how many,
 * by protocol and HTTP status, and how long they took. Labels are bounded sets (never a path, id or
 * user), so a scraper's storage does not grow with traffic.
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

  constructor(component: "serve" | "worker" | "dev") {
    this.registry.setDefaultLabels({ component });
    collectDefaultMetrics({ register: this.registry, prefix: "flowlog_" });
  }

  /** The handler, counting and timing each request it is given once its answer ends. */
  instrument<H extends Handler>(handler: H): H {
    const wrapped = (req: AnyRequest, res: AnyResponse) => {
      const started = process.hrtime.bigint();
      const protocol = protocolOf(req);
      let recorded = false;
      const record = () => {
        if (recorded) return;
        recorded = true;
        this.requests.inc({ protocol, status: String(res.statusCode) });
        this.duration.observe({ protocol }, Number(process.hrtime.bigint() - started) / 1e9);
      };
      res.once("finish", record);
      res.once("close", record);
      handler(req, res);
    };
    return wrapped as H;
  }

  /** Answers `GET /metrics` in Prometheus's text format; false for any other request. */
  async answer(req: NodeRequest, res: NodeResponse): Promise<boolean> {
    if (req.method !== "GET" || new URL(req.url ?? "/", "http://x").pathname !== "/metrics") return false;
    const body = await this.registry.metrics();
    res.writeHead(200, { "content-type": this.registry.contentType, "cache-control": "no-store" });
    res.end(body);
    return true;
  }
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
