import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import autocannon from "autocannon";
import { installDebianPackages } from "../../src/tools/debian-packages.js";
import { findOnPath } from "../../src/tools/executables.js";
import { type GoBinary, resolveGoBinary } from "../../src/tools/go-binary.js";
import { cpuSecondsOf } from "../../src/util/proc-stat.js";
import { enveloped } from "./grpc-envelope.js";
import { type Distribution, distribution } from "./sample.js";

/** What one load run measured: throughput, latency of the successful calls, and every failure. */
export interface LoadResult {
  requestsPerSecond: number;
  latency: Distribution;
  /** Answers other than 2xx (HTTP) or OK (gRPC), plus connection errors: a bench with any is void. */
  failures: number;
  /** With a `serverPid`: the server process's CPU time per answer in the measured run, in ms. */
  serverCpuMs?: number;
  /** The load generator's own CPU time per answer in the measured run, in ms: it shares the machine. */
  clientCpuMs?: number;
}

export interface LoadPlan {
  connections: number;
  /** Measured seconds, after `warmupSeconds` of the same load that is thrown away. */
  seconds: number;
  warmupSeconds: number;
  /** The server's process, whose CPU time (every thread, from /proc) is read around the measured run. */
  serverPid?: number;
  /**
   * How often autocannon looks whether a run's time is up, in ms: a run lasts until its first look past
   * its seconds. Unset, autocannon's default of a second, with which the full plans' figures were taken
   * (a 0.25 s warm-up ran a whole second); quick plans set `quickTickMs`, so that a quick load of 0.5 s
   * takes 0.5 s and not 2 with its warm-up, and one of some answers ends soon after the last.
   */
  tickMs?: number;
  /**
   * Quick plans: autocannon's measured run ends after this many answers per connection, and its warm-up
   * after `warmupRequests` per connection, instead of after their seconds: every target then answers,
   * however busy the machine, and a load costs what its answers cost (an execution at eight in flight took
   * longer here than a quick load's half second). No warm-up with `warmupRequests` 0. Loads from ghz,
   * h2load or the no-op loops keep to the seconds.
   */
  requests?: number;
  warmupRequests?: number;
}

/** The tick of quick plans' loads (see LoadPlan.tickMs). */
export const quickTickMs = 10;

/** A quick plan's load of the logs API: ten connections, ten answers each after two (LoadPlan.requests). */
export const quickApiLoad: LoadPlan = {
  connections: 10,
  seconds: 0.5,
  warmupSeconds: 0.25,
  tickMs: quickTickMs,
  requests: 10,
  warmupRequests: 2,
};

/** A quick plan's load of executions: eight in flight, two answers each, no warm-up. */
export const quickExecutionLoad: LoadPlan = {
  connections: 8,
  seconds: 0.5,
  warmupSeconds: 0.25,
  tickMs: quickTickMs,
  requests: 2,
  warmupRequests: 0,
};

/** A load's length as a table's title gives it. */
export function loadLength(plan: Pick<LoadPlan, "seconds" | "requests">): string {
  if (plan.requests === undefined) return `${plan.seconds} s`;
  return `${plan.requests} answers per connection`;
}

export interface HttpTarget {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/**
 * HTTP/1.1 load from autocannon with keep-alive connections. Latencies are taken from its per-response
 * event at hrtime resolution, because its own histogram keeps whole milliseconds only.
 */
export async function httpLoad(
  target: HttpTarget,
  plan: LoadPlan,
  /** Called for each successful answer, the warm-up's included. */
  onSuccess: () => void = () => {},
): Promise<LoadResult> {
  const warmup = { seconds: plan.warmupSeconds, requests: plan.warmupRequests };
  if ((warmup.requests ?? warmup.seconds) > 0) await autocannonRun(target, plan, warmup, onSuccess);
  const times: number[] = [];
  const cpu = cpuMeter(plan.serverPid);
  // autocannon runs in this process, which does nothing else while it loads.
  const client = process.cpuUsage();
  const measured = { seconds: plan.seconds, requests: plan.requests };
  const result = await autocannonRun(target, plan, measured, (responseTime) => {
    times.push(responseTime);
    onSuccess();
  });
  const { user, system } = process.cpuUsage(client);
  return {
    requestsPerSecond: result.requests.total / (result.duration || plan.seconds),
    latency: distribution(times),
    failures: result.non2xx + result.errors,
    ...cpu(result.requests.total),
    clientCpuMs: (user + system) / 1000 / Math.max(result.requests.total, 1),
  };
}

function autocannonRun(
  target: HttpTarget,
  { connections, tickMs }: LoadPlan,
  /** A number of answers per connection if given, else seconds. */
  length: { seconds: number; requests?: number | undefined },
  onResponse: (responseTime: number) => void,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        method: target.method ?? "GET",
        headers: target.headers,
        body: target.body,
        connections,
        ...(length.requests === undefined
          ? { duration: length.seconds }
          : { amount: length.requests * connections }),
        ...(tickMs === undefined ? {} : { sampleInt: tickMs }),
        // A sync execution waits for its workflow; behind a backlog of deliveries that can pass
        // autocannon's default 10 s, and a slow answer is a figure, not a failure.
        timeout: 60,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) onResponse(responseTime);
    });
  });
}

/** ghz, a load generator for gRPC, built from its Go module like the Temporal CLI (D25). */
const ghz: GoBinary = {
  name: "ghz",
  module: "github.com/bojand/ghz/cmd/ghz",
  version: "v0.120.0",
  withoutGo: "Install ghz (https://ghz.sh), or Go to let the bench build it.",
  buildTime: "takes about a minute",
};

export interface GrpcTarget {
  /** host:port, plaintext HTTP/2. */
  address: string;
  /** package.Service.Method, resolved through the server's reflection service unless `protoset` is given. */
  call: string;
  /** A descriptor set (`buf build -o`) for a server without reflection. */
  protoset?: string;
  data: unknown;
  metadata: Record<string, string>;
}

interface GhzReport {
  count: number;
  total: number;
  rps: number;
  slowest: number;
  latencyDistribution: { percentage: number; latency: number }[] | null;
  statusCodeDistribution: Record<string, number>;
  errorDistribution?: Record<string, number>;
}

/** gRPC load from ghz: `connections` HTTP/2 connections with one call in flight on each. */
export async function grpcLoad(target: GrpcTarget, plan: LoadPlan): Promise<LoadResult> {
  const binary = await resolveGoBinary(ghz);
  const run = async (seconds: number): Promise<{ report: GhzReport; cpuSeconds: number }> => {
    const { stdout, cpuSeconds } = await runCounted(binary, [
      "--insecure",
      ...(target.protoset ? ["--protoset", target.protoset] : []),
      "--call",
      target.call,
      "--data",
      JSON.stringify(target.data),
      "--metadata",
      JSON.stringify(target.metadata),
      "--connections",
      String(plan.connections),
      "--concurrency",
      String(plan.connections),
      "--duration",
      `${seconds}s`,
      // Calls still in flight when the time is up are left out, not counted as failures.
      "--duration-stop",
      "ignore",
      "--format",
      "json",
      // The request is fixed data: executing it as a template for every call only took the load
      // generator's CPU (70 to 100 µs a call, measured) from the two cores the server shares with it.
      "--disable-template-functions",
      "--disable-template-data",
      target.address,
    ]);
    return { report: JSON.parse(stdout) as GhzReport, cpuSeconds };
  };
  await run(plan.warmupSeconds);
  const cpu = cpuMeter(plan.serverPid);
  const { report, cpuSeconds: clientCpuSeconds } = await run(plan.seconds);
  const at = (percentage: number) =>
    (report.latencyDistribution?.find((d) => d.percentage === percentage)?.latency ?? Number.NaN) / 1e6;
  const ok = report.statusCodeDistribution.OK ?? 0;
  if (ok < report.count) {
    process.stderr.write(
      `  ghz ${target.call} on ${target.address}: ${JSON.stringify(report.statusCodeDistribution)} ` +
        `${JSON.stringify(report.errorDistribution ?? {})}\n`,
    );
  }
  return {
    requestsPerSecond: report.rps,
    latency: { samples: ok, p50: at(50), p99: at(99), max: report.slowest / 1e6 },
    failures: report.count - ok,
    ...cpu(report.count),
    clientCpuMs: (clientCpuSeconds * 1000) / Math.max(report.count, 1),
  };
}

/** A request as h2load sends it, over HTTP/1.1 or h2c (HTTP/2 with prior knowledge). */
export interface H2loadTarget {
  /** `http://host:port/path?query`. */
  url: string;
  http1?: boolean;
  /** Sent as the body of a POST; a request without one is a GET. */
  body?: Uint8Array;
  headers: Record<string, string>;
}

/** A gRPC call as h2load sends it: the request message in its envelope, over h2c. */
export function h2loadGrpcCall(
  address: string,
  path: string,
  message: Uint8Array,
  metadata: Record<string, string>,
): H2loadTarget {
  return {
    url: `http://${address}${path}`,
    body: enveloped(message),
    headers: { "content-type": "application/grpc", te: "trailers", ...metadata },
  };
}

/**
 * Load from h2load, nghttp2's load generator in C (Debian's `nghttp2-client`): `connections` keep-alive
 * connections with one request in flight on each, as autocannon and ghz load, for less CPU per request
 * than either (a fifth to a tenth of ghz's, which decodes every gRPC answer into dynamic messages). The
 * same client for REST and gRPC, and one light enough that its share of the two cores moves the server
 * little, lets the server's cost of each protocol be compared. h2load knows HTTP statuses only: a gRPC
 * error is an HTTP 200, so the caller must check a gRPC call's `grpc-status` itself.
 */
export async function h2loadLoad(target: H2loadTarget, plan: LoadPlan): Promise<LoadResult> {
  const binary = await resolveH2load();
  const dir = mkdtempSync(path.join(tmpdir(), "h2load-"));
  const body = path.join(dir, "request.bin");
  const log = path.join(dir, "requests.tsv");
  if (target.body) writeFileSync(body, target.body);
  const run = (seconds: number) =>
    runCounted(binary, [
      ...(target.http1 ? ["--h1"] : []),
      ...["--clients", String(plan.connections), "--max-concurrent-streams", "1"],
      // h2load reads a fraction of a second only with a unit.
      ...["--duration", `${Math.round(seconds * 1000)}ms`, "--log-file", log],
      ...(target.body ? ["--data", body] : []),
      ...Object.entries(target.headers).flatMap(([name, value]) => ["--header", `${name}: ${value}`]),
      target.url,
    ]);
  try {
    await run(plan.warmupSeconds);
    rmSync(log); // only the measured run's requests are counted
    const cpu = cpuMeter(plan.serverPid);
    const { stdout, cpuSeconds } = await run(plan.seconds);
    // One line per request: its start (µs since the epoch), its HTTP status, its time to the answer's end (µs).
    const requests = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split("\t").map(Number));
    const ok = requests.filter(([, status]) => status === 200);
    const count = (what: string) => Number(new RegExp(`(\\d+) ${what}`).exec(stdout)?.[1] ?? Number.NaN);
    return {
      requestsPerSecond: ok.length / plan.seconds,
      latency: distribution(ok.map(([, , micros]) => (micros ?? 0) / 1000)),
      failures: requests.length - ok.length + count("errored") + count("timeout"),
      ...cpu(requests.length),
      clientCpuMs: (cpuSeconds * 1000) / Math.max(requests.length, 1),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** h2load, from Debian's package like the project's other servers and tools (installed when missing). */
async function resolveH2load(): Promise<string> {
  const onPath = await findOnPath("h2load");
  if (onPath) return onPath;
  await installDebianPackages(["nghttp2-client"], "h2load is needed by the gateway bench's rows from h2load");
  return "/usr/bin/h2load";
}

/** Runs a load generator to its end; its output, and the CPU time it took (user and system, children too). */
async function runCounted(binary: string, args: string[]): Promise<{ stdout: string; cpuSeconds: number }> {
  const { stdout, stderr } = await promisify(execFile)(
    "sh",
    [
      "-c",
      // The shell waits for the command, then prints its own stat line, whose cutime and cstime are the
      // command's CPU time.
      '"$0" "$@"; status=$?; read -r stat < /proc/$$/stat; echo "$stat" >&2; exit $status',
      binary,
      ...args,
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return { stdout, cpuSeconds: childrenCpuSeconds(stderr.trim().split("\n").at(-1) ?? "") };
}

/**
 * Starts counting a process's CPU time; the returned function gives it per answer. Throughput on two
 * shared cores moves with the load generator's own appetite and the VM's neighbours; the server's CPU
 * time per answer is what the server itself spends.
 */
function cpuMeter(pid: number | undefined): (answers: number) => { serverCpuMs?: number } {
  if (pid === undefined) return () => ({});
  const before = cpuSeconds(pid);
  return (answers) => (answers > 0 ? { serverCpuMs: ((cpuSeconds(pid) - before) * 1000) / answers } : {});
}

/** User and system time of every thread of a process so far, from /proc/<pid>/stat (Linux). */
function cpuSeconds(pid: number): number {
  return cpuSecondsOf(readFileSync(`/proc/${pid}/stat`, "utf8")).own;
}

/** The CPU time of a process's waited-for children (cutime + cstime), from its /proc/<pid>/stat line. */
function childrenCpuSeconds(stat: string): number {
  const seconds = cpuSecondsOf(stat).children;
  if (!Number.isFinite(seconds)) throw new Error(`no /proc stat line after ghz: ${stat}`);
  return seconds;
}
