import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureTemporal } from "../../src/temporal/dev/ensure-temporal.js";
import { freeListeningPort } from "../../src/util/free-port.js";
import {
  bootstrapAccount,
  type RunningProcess,
  startFlowlog,
  startTogether,
  unlimitedPlanLimits,
} from "./processes.js";
import { shared } from "./quick-run.js";
import { startOtlpSink } from "./receiver.js";
import type { BenchOptions } from "./report.js";

/** The whole service as `flowlog dev` runs it, but each part in a process of its own. */
export interface FlowlogStack {
  /** host:port of the flowlog API. */
  api: string;
  temporalAddress: string;
  key: string;
  workspaceId: string;
  /** The same key as a header, for every API call. */
  auth: Record<string, string>;
  /** POSTs JSON to the REST API and returns the parsed answer; throws on anything but 2xx. */
  post<T>(apiPath: string, body: unknown, key?: string): Promise<T>;
  /** Another enterprise account, in a workspace of its own: a second tenant. */
  addAccount(): Promise<{ workspaceId: string; key: string }>;
  stop(): Promise<void>;
}

export interface DevServerStack extends FlowlogStack {
  /** FLOWLOG_DATA_DIR of its processes: a bench may open the same SQLite store. */
  dataDir: string;
  /** With the roles in workers of their own: stops the deliveries' worker, or starts it again. */
  deliveriesWorker(running: boolean): Promise<void>;
}

/**
 * How the stack runs `flowlog worker`: one process with both roles, or a process for each role
 * (FLOWLOG_WORKER_ROLES, issue 51), as a deployment that scales executions and deliveries apart.
 */
export type WorkerShape = "one worker" | "a worker per role";

/**
 * A headless Temporal dev server, `flowlog worker` (one, or one per role) and `flowlog serve` on a fresh
 * data dir, and an enterprise account from `flowlog bootstrap`. Limits are raised so the benches measure
 * the work, not the plan's refusals (every call still takes its tokens), and loopback receivers are
 * allowed (D22).
 */
export async function startFlowlogStack(
  extraEnv: Record<string, string> = {},
  /** The dev server's persistence, as FLOWLOG_TEMPORAL_DEV_DB sets it for `flowlog dev` (file by default). */
  temporalDb: "file" | "memory" = "file",
  workers: WorkerShape = "one worker",
): Promise<DevServerStack> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-stack-"));
  const running: RunningProcess[] = [];
  let deliveries: RunningProcess | undefined;
  const settings = {
    FLOWLOG_DATA_DIR: dataDir,
    FLOWLOG_ALLOW_PRIVATE_NETWORKS: "true",
    FLOWLOG_PLAN_LIMITS: unlimitedPlanLimits,
    // The worker's probe port: any free one, so a bench never collides with a running flowlog.
    FLOWLOG_WORKER_PORT: "0",
    ...extraEnv,
  };
  // The account is made while the dev server starts: bootstrap only writes the store.
  const [temporal, account] = await Promise.allSettled([
    ensureTemporal({
      persistence: temporalDb,
      address: undefined,
      namespace: "default",
      dataDir: path.join(dataDir, "temporal"),
      port: await freeListeningPort(),
      headless: true,
    }),
    bootstrapAccount(settings),
  ]);
  const stop = async () => {
    await deliveries?.stop();
    for (const child of running.reverse()) await child.stop();
    if (temporal.status === "fulfilled") await temporal.value.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    if (temporal.status === "rejected") throw temporal.reason;
    if (account.status === "rejected") throw account.reason;
    const temporalAddress = temporal.value.address;
    const env = { ...settings, TEMPORAL_ADDRESS: temporalAddress };
    const worker = (roles: string) =>
      startFlowlog(["worker"], { env: { ...env, FLOWLOG_WORKER_ROLES: roles }, ready: /Worker polling/ });
    const roles = workers === "one worker" ? ["executions,deliveries"] : ["executions", "deliveries"];
    const [serve, ...workerProcesses] = await startTogether([
      startFlowlog(["serve"], { env: { ...env, PORT: "0" }, ready: /API at http:\/\/localhost:(\d+)/ }),
      ...roles.map(worker),
    ]);
    // The deliveries' worker of a stack with the roles apart is stopped and started on its own.
    if (workers === "a worker per role") deliveries = workerProcesses.pop();
    if (!serve) throw new Error("flowlog serve did not start");
    running.push(...workerProcesses, serve);
    const api = `127.0.0.1:${serve.ready[1]}`;
    const { key, workspaceId } = account.value;
    return {
      api,
      temporalAddress,
      key,
      workspaceId,
      auth: { "x-api-key": key },
      post: poster(api, key),
      addAccount: () => bootstrapAccount(env),
      dataDir,
      async deliveriesWorker(run) {
        if (workers === "one worker") throw new Error("the stack's one worker runs both roles");
        if (run) {
          deliveries ??= await worker("deliveries");
        } else {
          await deliveries?.stop();
          deliveries = undefined;
        }
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What sets one bench stack apart from another. */
export interface StackSettings {
  /** The dev server's persistence, as FLOWLOG_TEMPORAL_DEV_DB sets it for `flowlog dev` (file by default). */
  persistence?: "file" | "memory";
  workers?: WorkerShape;
  /**
   * OpenTelemetry tracing on (D50): serve and worker export every span over OTLP to a loopback sink that
   * keeps nothing, what a traced flowlog pays without a backend's own cost.
   */
  traced?: boolean;
}

/**
 * The stack a bench loads, with flowlog dev's defaults but for `settings`: its own in full mode; with
 * --quick the run's one of those settings (`shared`), in a workspace of the bench's own, so that no bench
 * sees another's workflows or subscriptions.
 */
export async function benchStack(
  options: BenchOptions,
  settings: StackSettings = {},
): Promise<DevServerStack> {
  const { persistence = "file", workers = "one worker", traced = false } = settings;
  const start = () => startSettledStack(persistence, workers, traced);
  if (!options.quick) return start();
  const stack = await shared(
    `flowlog stack: ${persistence}, ${workers}${traced ? ", traced" : ""}`,
    start,
    (started) => started.stop(),
  );
  const { workspaceId, key } = await stack.addAccount();
  return {
    ...stack,
    workspaceId,
    key,
    auth: { "x-api-key": key },
    post: poster(stack.api, key),
    stop: async () => undefined,
  };
}

/** startFlowlogStack, with the OTLP sink of a traced stack started before it and closed after it. */
async function startSettledStack(
  persistence: "file" | "memory",
  workers: WorkerShape,
  traced: boolean,
): Promise<DevServerStack> {
  if (!traced) return startFlowlogStack({}, persistence, workers);
  const sink = await startOtlpSink();
  try {
    const stack = await startFlowlogStack({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }, persistence, workers);
    return {
      ...stack,
      async stop() {
        await stack.stop();
        await sink.close();
      },
    };
  } catch (error) {
    await sink.close();
    throw error;
  }
}

/**
 * A workflow of one HTTP-request block between the starter and a response block: the smallest workflow
 * that does real outside work, calling `url` and answering with what it got.
 */
export async function createHttpBlockWorkflow(
  stack: FlowlogStack,
  url: string,
  account: { workspaceId: string; key: string } = stack,
): Promise<string> {
  const { workflow } = await stack.post<{ workflow: { id: string } }>(
    `/api/v1/workspaces/${account.workspaceId}/workflows`,
    {
      name: "Bench HTTP block",
      state: {
        blocks: {
          start: { type: "starter", name: "Start" },
          fetch: { type: "api", name: "API", config: { method: "GET", url } },
          done: { type: "response", name: "Done", config: { data: { got: "<api.data>" }, status: 200 } },
        },
        edges: [
          { source: "start", target: "fetch" },
          { source: "fetch", target: "done" },
        ],
      },
    },
    account.key,
  );
  return workflow.id;
}

/** GETs JSON from the stack's REST API with its key; throws on anything but 2xx. */
export async function getJson<T>(stack: FlowlogStack, apiPath: string): Promise<T> {
  const response = await fetch(`http://${stack.api}${apiPath}`, { headers: stack.auth });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${apiPath} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** FlowlogStack's post, against the API at `api` (host:port) with `defaultKey` unless another is given. */
export function poster(api: string, defaultKey: string): FlowlogStack["post"] {
  return async <T>(apiPath: string, body: unknown, key = defaultKey): Promise<T> => {
    const response = await fetch(`http://${api}${apiPath}`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`POST ${apiPath} answered ${response.status}: ${text}`);
    return JSON.parse(text) as T;
  };
}
