import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fromBinary, fromJson, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { LogsService } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { enveloped } from "./support/grpc-envelope.js";
import {
  grpcLoad,
  type H2loadTarget,
  type HttpTarget,
  h2loadGrpcCall,
  h2loadLoad,
  httpLoad,
  type LoadPlan,
  type LoadResult,
  loadLength,
  quickApiLoad,
} from "./support/load.js";
import {
  bootstrapAccount,
  flowlogCli,
  type RunningProcess,
  repoRoot,
  startFlowlog,
  startProcess,
  unlimitedPlanLimits,
} from "./support/processes.js";
import { type Receiver, startOtlpSink } from "./support/receiver.js";
import { type Bench, type BenchOptions, ms, perSecond, ratio, type Table } from "./support/report.js";
import { distribution } from "./support/sample.js";

interface Plan {
  entries: number;
  load: LoadPlan;
  /**
   * Each target is loaded this many times, the targets taking turns, and the median round is reported:
   * two cores shared by the server, the load generator and whatever the VM's neighbours do moved single
   * 10 s runs by 10 to 15 %, as much as the gaps some goals turn on.
   */
  rounds: number;
  /**
   * Then each goal's two targets are loaded in this many back-to-back pairs, the order swapped every
   * pair, and the goal read as the median of the pairs' ratios (an odd count, so the median is one
   * pair's): on these shared cores a target's rate drifted by up to 30 % between the rounds of one run,
   * more than the 10 % some goals turn on, while the two loads of a pair are seconds apart. None with
   * --quick: CI reads no goal.
   */
  pairs: number;
}

const plans: Record<"quick" | "full", Plan> = {
  quick: {
    entries: 2_000,
    load: { ...quickApiLoad, seconds: 0.4, warmupSeconds: 0.1 },
    rounds: 1,
    pairs: 0,
  },
  full: { entries: 100_000, load: { connections: 10, seconds: 5, warmupSeconds: 1 }, rounds: 3, pairs: 5 },
};

/**
 * Goals of issue 13 that compare two targets, read from the same pairs of loads: the rate of `target`
 * at least `rateAtLeast` times that of `against`, and its p99 at most `p99AtMost` times the other's.
 */
export interface Goal {
  target: string;
  against: string;
  rateAtLeast: number;
  p99AtMost?: number;
  /**
   * Also the pairs' ratio of the server's CPU time per answer, which the load generator's share of the
   * two cores moves less than the rate: where a goal is about what one server does more than the other.
   */
  cpuPerAnswer?: true;
}

const goals: Record<Endpoint["method"], Goal[]> = {
  ListLogs: [
    { target: "REST", against: "bare: page SQL", rateAtLeast: 0.7, p99AtMost: 2 },
    { target: "Connect", against: "REST", rateAtLeast: 0.9 },
    { target: "gRPC", against: "REST", rateAtLeast: 0.9 },
    // Issue 55: tracing on, every request sampled and exported, costs at most a tenth of the rate (D50).
    { target: "REST, tracing on", against: "REST", rateAtLeast: 0.9, cpuPerAnswer: true },
  ],
  GetLog: [
    { target: "REST", against: "bare: page SQL", rateAtLeast: 0.35, p99AtMost: 2 },
    { target: "Connect", against: "REST", rateAtLeast: 0.9 },
    { target: "gRPC", against: "REST", rateAtLeast: 0.9 },
    { target: "REST, tracing on", against: "REST", rateAtLeast: 0.9, cpuPerAnswer: true },
  ],
};

/**
 * The API under load (issue 7, item 2): `flowlog serve` in a process of its own, on a store filled by
 * `flowlog seed`, hit on loopback by autocannon (REST, Connect, gRPC-Web) and ghz (gRPC) with keep-alive
 * connections; beside it two bare `node:http` processes on the same file, one running only the page's SQL
 * and one every statement flowlog runs for the request (support/bare-logs-server.ts). A second
 * `flowlog serve` on the same store runs with OpenTelemetry tracing on (D50), exporting every span to an
 * OTLP sink that keeps nothing.
 */
export const gatewayBench: Bench = {
  name: "gateway",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-gateway-"));
    const running: RunningProcess[] = [];
    let otlpSink: Receiver | undefined;
    try {
      const env = {
        FLOWLOG_DATA_DIR: dataDir,
        FLOWLOG_PLAN_LIMITS: unlimitedPlanLimits,
      };
      const account = await bootstrapAccount(env);
      const { workspaceId } = account;
      const seeding = performance.now();
      await flowlogCli(
        ["seed", "--workspace", workspaceId, "--executions", String(plan.entries), "--seed", "bench"],
        env,
      );
      progress(`seeded ${plan.entries} log entries with flowlog seed`, seeding);
      const starting = performance.now();
      const flowlog = await startFlowlog(["serve"], {
        env: { ...env, PORT: "0" },
        ready: /flowlog API at http:\/\/localhost:(\d+)/,
      });
      running.push(flowlog);
      otlpSink = await startOtlpSink();
      const traced = await startFlowlog(["serve"], {
        env: { ...env, PORT: "0", OTEL_EXPORTER_OTLP_ENDPOINT: otlpSink.url },
        ready: /flowlog API at http:\/\/localhost:(\d+)/,
      });
      running.push(traced);
      /** Each server's process, by the address it serves, for its CPU time. */
      const pids = new Map<string, number>([
        [`127.0.0.1:${flowlog.ready[1]}`, flowlog.pid],
        [`127.0.0.1:${traced.ready[1]}`, traced.pid],
      ]);
      const serving = (server: RunningProcess, port: string | undefined) => {
        const address = `127.0.0.1:${port}`;
        pids.set(address, server.pid);
        return address;
      };
      const bare = async (mode: "page" | "arrays" | "request" | "floor") => {
        const server = await startProcess(
          process.execPath,
          ["--import", "tsx", path.join(repoRoot, "bench/support/bare-logs-server.ts"), mode, dataDir],
          { env, ready: /server on port (\d+)/ },
        );
        running.push(server);
        return serving(server, server.ready[1]);
      };
      const bareGrpc = async () => {
        const server = await startProcess(
          process.execPath,
          ["--import", "tsx", path.join(repoRoot, "bench/support/bare-grpc-server.ts"), dataDir],
          { env, ready: /server on port (\d+)/ },
        );
        running.push(server);
        return serving(server, server.ready[1]);
      };
      const bareConnect = async () => {
        const server = await startProcess(
          process.execPath,
          ["--import", "tsx", path.join(repoRoot, "bench/support/bare-connect-server.ts"), dataDir],
          { env, ready: /server on ports (\d+) (\d+)/ },
        );
        running.push(server);
        return {
          bareConnect: serving(server, server.ready[1]),
          bareConnectGrpc: serving(server, server.ready[2]),
        };
      };
      // Started side by side, each waiting mostly on its own start-up; all settle before a failure is
      // thrown, so that none starts after the clean-up below has run.
      const starts = [
        bare("page"),
        bare("arrays"),
        bare("request"),
        bare("floor"),
        bareConnect(),
        bareGrpc(),
        buildProtoset(dataDir),
      ] as const;
      const [barePage, barePageArrays, bareRequest, bareFloor, connect, bareGrpcServer, protoset] =
        await Promise.all(starts).catch(async (error: unknown) => {
          await Promise.allSettled(starts);
          throw error;
        });
      const servers: Servers = {
        flowlog: `127.0.0.1:${flowlog.ready[1]}`,
        flowlogTraced: `127.0.0.1:${traced.ready[1]}`,
        barePage,
        barePageArrays,
        bareRequest,
        bareFloor,
        ...connect,
        bareGrpc: bareGrpcServer,
        protoset,
        key: account.key,
        pids,
      };
      progress("started flowlog serve and the bare servers", starting);
      const logId = await firstLogId(servers, workspaceId);
      const list = { workspaceId, limit: 100 };
      return [
        ...(await measureEndpoint(
          `GET /api/v1/logs?limit=100 (${plan.entries.toLocaleString("en-US")} entries)`,
          {
            servers,
            plan,
            restPath: `/api/v1/logs?workspaceId=${workspaceId}&limit=100`,
            method: "ListLogs",
            request: list,
          },
        )),
        ...(await measureEndpoint("GET /api/v1/logs/{id}", {
          servers,
          plan,
          restPath: `/api/v1/logs/${logId}`,
          method: "GetLog",
          request: { id: logId },
        })),
      ];
    } finally {
      await Promise.all(running.map((child) => child.stop()));
      await otlpSink?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

function progress(what: string, since: number): void {
  process.stderr.write(`  ${what} in ${((performance.now() - since) / 1000).toFixed(1)} s\n`);
}

interface Servers {
  flowlog: string;
  /** The same with tracing on (D50). */
  flowlogTraced: string;
  /** Bare node:http running only the page's SQL. */
  barePage: string;
  /** The same, its rows read as arrays and made objects in JavaScript. */
  barePageArrays: string;
  /** Bare node:http running every statement flowlog runs for the request. */
  bareRequest: string;
  /** Bare node:http running what no cache can spare: the page's SQL, the token's take, data_version. */
  bareFloor: string;
  /** The same work behind Connect-ES's Node adapter alone: HTTP/1.1 (Connect) and h2c (gRPC) ports. */
  bareConnect: string;
  bareConnectGrpc: string;
  /** Bare node:http2 doing the floor's work over gRPC, with no framework; no reflection, hence the protoset. */
  bareGrpc: string;
  protoset: string;
  key: string;
  pids: Map<string, number>;
}

interface Endpoint {
  servers: Servers;
  plan: Plan;
  restPath: string;
  /** The LogsService method the REST path maps to. */
  method: "ListLogs" | "GetLog";
  request: JsonObject;
}

async function measureEndpoint(title: string, endpoint: Endpoint): Promise<Table[]> {
  const { servers, plan, restPath, method, request } = endpoint;
  const auth = { "x-api-key": servers.key };
  /** The request as protobuf binary, for the gRPC and gRPC-Web targets. */
  const message = toBinary(rpcOf(method).input, fromJson(rpcOf(method).input, request));
  const targets: Record<string, HttpTarget> = {
    "bare: page SQL": { url: `http://${servers.barePage}${restPath}` },
    "bare: page SQL read as arrays": { url: `http://${servers.barePageArrays}${restPath}` },
    "bare: same statements": { url: `http://${servers.bareRequest}${restPath}`, headers: auth },
    "bare: page SQL + take": { url: `http://${servers.bareFloor}${restPath}`, headers: auth },
    "bare Connect: page SQL + take": {
      url: `http://${servers.bareConnect}/flowlog.logs.v1.LogsService/${method}`,
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "connect-protocol-version": "1" },
      body: JSON.stringify(request),
    },
    REST: { url: `http://${servers.flowlog}${restPath}`, headers: auth },
    "REST, tracing on": { url: `http://${servers.flowlogTraced}${restPath}`, headers: auth },
    Connect: {
      url: `http://${servers.flowlog}/flowlog.logs.v1.LogsService/${method}`,
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "connect-protocol-version": "1" },
      body: JSON.stringify(request),
    },
    "gRPC-Web": {
      url: `http://${servers.flowlog}/flowlog.logs.v1.LogsService/${method}`,
      method: "POST",
      headers: { ...auth, "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      // As browsers' gRPC-Web clients send it: the message in binary, in its envelope.
      body: enveloped(message),
    },
  };
  // REST and gRPC from one more load generator, h2load, whose CPU per request is a fraction of ghz's and
  // autocannon's: what the server spends on each protocol's answer, from the same client. h2load counts
  // HTTP statuses only, so the gRPC targets' grpc-status is checked before the load (with the others'
  // answers) and after it.
  const grpcCall = (address: string) =>
    h2loadGrpcCall(address, `/flowlog.logs.v1.LogsService/${method}`, message, auth);
  const h2loadTargets: Record<string, H2loadTarget> = {
    "bare: page SQL + take, from h2load": {
      url: `http://${servers.bareFloor}${restPath}`,
      http1: true,
      headers: auth,
    },
    "bare: page SQL + take over gRPC (node:http2), from h2load": grpcCall(servers.bareGrpc),
    "REST, from h2load": { url: `http://${servers.flowlog}${restPath}`, http1: true, headers: auth },
    "gRPC, from h2load": grpcCall(servers.flowlog),
  };
  await checkSameAnswer(
    targets,
    Object.values(h2loadTargets).filter((target) => target.body),
    method,
  );
  /** The load plan with the CPU time of the server at `address` (host:port) read around it. */
  const withServer = (address: string) => {
    const pid = servers.pids.get(address);
    return pid === undefined ? plan.load : { ...plan.load, serverPid: pid };
  };
  const grpc = (address: string, protoset?: string) => () =>
    grpcLoad(
      {
        address,
        call: `flowlog.logs.v1.LogsService.${method}`,
        data: request,
        metadata: auth,
        ...(protoset ? { protoset } : {}),
      },
      withServer(address),
    );
  const loads: [string, () => Promise<LoadResult>][] = [
    ...Object.entries(targets).map(([name, target]): [string, () => Promise<LoadResult>] => [
      name,
      () => httpLoad(target, withServer(new URL(target.url).host)),
    ]),
    ["bare: page SQL + take over gRPC (node:http2)", grpc(servers.bareGrpc, servers.protoset)],
    ["bare Connect over gRPC", grpc(servers.bareConnectGrpc)],
    ["gRPC", grpc(servers.flowlog)],
    ...Object.entries(h2loadTargets).map(([name, target]): [string, () => Promise<LoadResult>] => [
      name,
      async () => {
        const result = await h2loadLoad(target, withServer(new URL(target.url).host));
        if (target.body) await grpcAnswer(target, method);
        return result;
      },
    ]),
  ];
  const rounds = new Map<string, LoadResult[]>(loads.map(([name]) => [name, []]));
  const loading = performance.now();
  for (let round = 0; round < plan.rounds; round++) {
    for (const [name, load] of loads) rounds.get(name)?.push(await load());
  }
  progress(`loaded ${title}, ${plan.rounds} round(s)`, loading);
  const results = [...rounds].map(([name, runs]): [string, LoadResult, LoadResult[]] => [
    name,
    medianRun(runs),
    runs,
  ]);
  const failed = results.filter(([, , runs]) => runs.some((run) => run.failures > 0));
  if (failed.length > 0) {
    throw new Error(`failed calls under load: ${failed.map(([n]) => n).join(", ")}`);
  }
  const rate = (name: string) => results.find(([n]) => n === name)?.[1].requestsPerSecond ?? Number.NaN;
  const [pageRate, requestRate] = [rate("bare: page SQL"), rate("bare: same statements")];
  const roundsTable: Table = {
    title:
      `gateway: ${title}, ${plan.load.connections} keep-alive connections on loopback, ` +
      `${plan.rounds} round(s) of ${loadLength(plan.load)} per server` +
      `${plan.load.requests === undefined ? "" : ` (ghz and h2load: ${plan.load.seconds} s)`}, the median round shown`,
    columns: [
      "server",
      "req/s",
      "rounds' req/s",
      "p50 ms",
      "p99 ms",
      "max ms",
      "server CPU µs/answer",
      "load generator CPU µs/answer",
      "vs same statements",
      "vs page SQL",
    ],
    rows: results.map(([name, r, runs]) => [
      name,
      perSecond(r.requestsPerSecond),
      runs.map((run) => perSecond(run.requestsPerSecond)).join(" / "),
      ms(r.latency.p50),
      ms(r.latency.p99),
      ms(r.latency.max),
      r.serverCpuMs === undefined ? "" : (r.serverCpuMs * 1000).toFixed(0),
      r.clientCpuMs === undefined ? "" : (r.clientCpuMs * 1000).toFixed(0),
      ratio(r.requestsPerSecond / requestRate),
      ratio(r.requestsPerSecond / pageRate),
    ]),
    note:
      "bare: node:http and JSON.stringify, no framework. page SQL: only the statement that reads the page or entry. " +
      "read as arrays: the same, its rows read in better-sqlite3's raw mode, as flowlog's store reads a page, " +
      "and made objects by their column names. " +
      "same statements: every statement flowlog runs for the request (key lookup, rate-limit take, membership, " +
      "page, usage snapshot) through the same store code. page SQL + take: page SQL, the API token's take and " +
      "a data_version look, what no cache can spare a request (D11). bare Connect: the same work behind " +
      "Connect-ES's Node adapter and the generated service alone (a page read as arrays, in list form from the columns, one " +
      "entry as its id alone), over " +
      "Connect (HTTP/1.1) and gRPC (h2c). page SQL + take over gRPC: the same work and answer behind bare " +
      "node:http2, no framework. REST, Connect, gRPC-Web (binary, over HTTP/1.1 as browsers send it) and gRPC: one flowlog " +
      "serve process. server CPU: the server process's CPU time (every thread, /proc) per answer in the " +
      "median round, which the load generator's share of the two cores does not move; load generator CPU: " +
      "autocannon's (in the bench's process), ghz's or h2load's, per answer, taken from the same two cores. " +
      "from h2load: the same requests from nghttp2's load generator in C (REST over HTTP/1.1, gRPC over h2c), " +
      "whose CPU per request is a fraction of ghz's and autocannon's: each protocol's server cost from the " +
      "same client; its gRPC answers' grpc-status is checked before and after each load, since it counts " +
      "HTTP statuses only. Goals (issue 13): REST >= 0.70x page SQL on the list, >= 0.35x on one entry; gRPC >= " +
      "0.90x REST.",
  };
  if (plan.pairs === 0) return [roundsTable];
  return [roundsTable, await measureGoalsInPairs(title, goals[method], new Map(loads), plan)];
}

/**
 * Each goal's two targets loaded back to back, `plan.pairs` times, the order swapped every pair so that a
 * steady drift of the machine's speed favours neither; the goal is read as the median pair's ratio.
 */
export async function measureGoalsInPairs(
  title: string,
  endpointGoals: Goal[],
  loadOf: Map<string, () => Promise<LoadResult>>,
  plan: { pairs: number },
): Promise<Table> {
  const loading = performance.now();
  const rows: string[][] = [];
  for (const goal of endpointGoals) {
    const pairs: { rate: number; p99: number; cpu: number }[] = [];
    for (let pair = 0; pair < plan.pairs; pair++) {
      const order = pair % 2 === 0 ? [goal.against, goal.target] : [goal.target, goal.against];
      const results = new Map<string, LoadResult>();
      for (const name of order) {
        const load = loadOf.get(name);
        if (!load) throw new Error(`no target named ${name}`);
        const result = await load();
        if (result.failures > 0) throw new Error(`failed calls under load: ${name}`);
        results.set(name, result);
      }
      const target = results.get(goal.target) as LoadResult;
      const against = results.get(goal.against) as LoadResult;
      pairs.push({
        rate: target.requestsPerSecond / against.requestsPerSecond,
        p99: target.latency.p99 / against.latency.p99,
        cpu: (target.serverCpuMs ?? Number.NaN) / (against.serverCpuMs ?? Number.NaN),
      });
    }
    const row = (what: string, ratios: number[], meets: (r: number) => boolean, goalText: string) => {
      const median = distribution(ratios).p50;
      rows.push([
        `${goal.target} / ${goal.against}, ${what}`,
        goalText,
        ratio(median),
        meets(median) ? "met" : "missed",
        ratios.map(ratio).join(" / "),
        `${ratios.filter(meets).length} of ${ratios.length}`,
      ]);
    };
    const { rateAtLeast, p99AtMost, cpuPerAnswer } = goal;
    row(
      "req/s",
      pairs.map((p) => p.rate),
      (r) => r >= rateAtLeast,
      `>= ${ratio(rateAtLeast)}`,
    );
    if (p99AtMost !== undefined) {
      row(
        "p99",
        pairs.map((p) => p.p99),
        (r) => r <= p99AtMost,
        `<= ${ratio(p99AtMost)}`,
      );
    }
    if (cpuPerAnswer) {
      // The rate goal read as CPU: a rate of 0.9x the other's is 1/0.9 of its CPU per answer.
      row(
        "server CPU per answer",
        pairs.map((p) => p.cpu),
        (r) => r <= 1 / rateAtLeast,
        `<= ${ratio(1 / rateAtLeast)}`,
      );
    }
  }
  progress(`loaded ${title} in pairs, ${plan.pairs} per goal`, loading);
  return {
    title: `gateway goals, ${title}: ${plan.pairs} pairs of back-to-back loads per goal, the order swapped every pair`,
    columns: [
      "target / baseline",
      "goal",
      "median pair",
      "verdict",
      "pairs' ratios, in order",
      "pairs meeting it",
    ],
    rows,
    note:
      "Each pair loads the two targets as the table above does, one after the other; its ratios are the " +
      "first target's rate and p99 over the second's. The rounds above spread each target's loads over " +
      "minutes, so their medians carry the machine's drift between them; a pair's two loads are seconds apart.",
  };
}

/**
 * A gRPC-Web answer's message, as the other targets' JSON; throws unless its trailers say OK, since a
 * gRPC-Web error is an HTTP 200 that a load generator would count as an answer.
 */
function grpcWebAnswer(method: Endpoint["method"], body: Buffer): unknown {
  let answer: unknown;
  let trailers = "";
  for (let offset = 0; offset + 5 <= body.length; ) {
    const flags = body.readUInt8(offset);
    const data = body.subarray(offset + 5, offset + 5 + body.readUInt32BE(offset + 1));
    offset += 5 + data.length;
    if (flags & 0x80) trailers = data.toString();
    else answer = fromBinary(rpcOf(method).output, data);
  }
  if (!/^grpc-status: 0\r$/m.test(trailers)) throw new Error(`gRPC-Web ${method} failed: ${trailers}`);
  return answer;
}

/**
 * The answer message of one gRPC call over h2c; throws unless its trailers say OK,
 * since a gRPC error is an HTTP 200 that h2load would count as an answer.
 */
async function grpcAnswer(target: H2loadTarget, method: Endpoint["method"]): Promise<unknown> {
  const url = new URL(target.url);
  const session = http2.connect(url.origin);
  try {
    const { body, trailers } = await new Promise<{ body: Buffer; trailers: http2.IncomingHttpHeaders }>(
      (resolve, reject) => {
        const call = session.request({ ":method": "POST", ":path": url.pathname, ...target.headers });
        const chunks: Buffer[] = [];
        call.on("data", (chunk: Buffer) => chunks.push(chunk));
        // An error may come as trailers only: the status in the answer's headers, and no body.
        call.on("response", (headers) => {
          if (headers["grpc-status"] !== undefined) resolve({ body: Buffer.alloc(0), trailers: headers });
        });
        call.on("trailers", (trailers) => resolve({ body: Buffer.concat(chunks), trailers }));
        call.on("error", reject);
        call.on("close", () => reject(new Error(`${target.url} ended without trailers`)));
        call.end(target.body);
      },
    );
    if (trailers["grpc-status"] !== "0") {
      throw new Error(`gRPC ${target.url} failed: ${JSON.stringify(trailers)}`);
    }
    return fromBinary(rpcOf(method).output, body.subarray(5));
  } finally {
    session.close();
  }
}

function rpcOf(method: Endpoint["method"]) {
  return method === "ListLogs" ? LogsService.method.listLogs : LogsService.method.getLog;
}

/** The median of a target's rounds by throughput, with its own latencies. */
function medianRun(runs: LoadResult[]): LoadResult {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor((sorted.length - 1) / 2)] as LoadResult;
}

/** The services' descriptors for ghz, for the server that serves no reflection. */
async function buildProtoset(dataDir: string): Promise<string> {
  const file = path.join(dataDir, "flowlog.binpb");
  await promisify(execFile)(path.join(repoRoot, "node_modules/.bin/buf"), ["build", "-o", file], {
    cwd: repoRoot,
  });
  return file;
}

/** Picks the newest entry through the REST API itself, so the id is one the API serves. */
async function firstLogId(servers: Servers, workspaceId: string): Promise<string> {
  const response = await fetch(`http://${servers.flowlog}/api/v1/logs?workspaceId=${workspaceId}&limit=1`, {
    headers: { "x-api-key": servers.key },
  });
  const body = (await response.json()) as { data?: { id: string }[] };
  const id = body.data?.[0]?.id;
  if (!response.ok || !id) throw new Error(`GET /api/v1/logs answered ${response.status}: no entry to read`);
  return id;
}

/** Every HTTP target must answer 200 with the same entries before it is timed: same work, same page. */
async function checkSameAnswer(
  targets: Record<string, HttpTarget>,
  grpcTargets: H2loadTarget[],
  method: Endpoint["method"],
): Promise<void> {
  const ids: string[] = [];
  /** The entries an answer holds, as its count and first id: a page and one entry alike. */
  const entriesOf = (body: unknown) => {
    const { data } = body as { data?: { id: string } | { id: string }[] };
    const entries = Array.isArray(data) ? data : [data];
    return `${entries.length}:${entries[0]?.id}`;
  };
  for (const target of grpcTargets) ids.push(entriesOf(await grpcAnswer(target, method)));
  for (const [name, target] of Object.entries(targets)) {
    const response = await fetch(target.url, {
      method: target.method,
      headers: target.headers,
      body: target.body,
    });
    const gRpcWeb = target.headers?.["content-type"]?.startsWith("application/grpc-web") === true;
    if (gRpcWeb && !response.ok) throw new Error(`${name} answered ${response.status}`);
    const body = gRpcWeb
      ? grpcWebAnswer(method, Buffer.from(await response.arrayBuffer()))
      : await response.json();
    if (!response.ok) throw new Error(`${name} answered ${response.status}: ${JSON.stringify(body)}`);
    ids.push(entriesOf(body));
  }
  if (new Set(ids).size !== 1) throw new Error(`the targets answered different pages: ${ids.join(" / ")}`);
}
