import path from "node:path";
import { Client, Connection } from "@temporalio/client";
import { benchStack, createHttpBlockWorkflow, type FlowlogStack } from "./support/flowlog-stack.js";
import { httpLoad, type LoadPlan, type LoadResult, loadLength, quickExecutionLoad } from "./support/load.js";
import { noopTaskQueue, noopWorkflowBundle } from "./support/noop-worker.js";
import type { noopWorkflow } from "./support/noop-workflow.js";
import { type RunningProcess, repoRoot, startProcess, startTogether } from "./support/processes.js";
import { shared } from "./support/quick-run.js";
import { startItemApi } from "./support/receiver.js";
import { type Bench, type BenchOptions, ms, perSecond, ratio } from "./support/report.js";
import { distribution } from "./support/sample.js";

const plans: Record<"quick" | "full", LoadPlan> = {
  quick: quickExecutionLoad,
  full: { connections: 8, seconds: 20, warmupSeconds: 3 },
};

/** One execution at a time and eight, on each kind of dev server `flowlog dev` can start (issue 12). */
const concurrencies = [1, 8];
const persistences = ["file", "memory"] as const;

/**
 * Executions on Temporal (issue 7, item 4): a one-HTTP-block workflow run by api sync calls to
 * `POST /api/v1/workflows/{id}/execute` (autocannon, keep-alive), against a workflow of one no-op
 * activity started and awaited with the Temporal client, on the same dev server, at the same concurrency.
 */
export const executionBench: Bench = {
  name: "execution",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const itemApi = await startItemApi();
    const itemUrl = `${itemApi.url}/items/1`;
    const tables = [];
    try {
      // Quick mode (CI) runs flowlog dev's default only: the other differs in one setting, not in code.
      for (const persistence of options.quick ? persistences.slice(0, 1) : persistences) {
        const stack = await benchStack(options, { persistence });
        try {
          const workflowId = await createHttpBlockWorkflow(stack, itemUrl);
          const baseline: Workload = {
            name: "one no-op activity (baseline)",
            open: () => openNoop(options, stack.temporalAddress),
          };
          const apiSync: Workload = {
            name: "one HTTP block, api sync",
            open: async () => ({
              load: (at) => executeLoad(stack, workflowId, at),
              close: async () => undefined,
            }),
          };
          const workloads: Workload[] = [
            apiSync,
            {
              name: "the same, tracing on",
              open: () => openTraced(options, persistence, itemUrl),
            },
            baseline,
            {
              name: "floor: bare API, one fetch activity",
              open: () => openFloor(options, stack.temporalAddress, itemUrl),
            },
            {
              name: "floor + log: the activity also writes the log entry",
              open: () => openFloor(options, stack.temporalAddress, itemUrl, true),
            },
          ];
          const result = await loadEach(workloads, plan, options.quick);
          const rows = concurrencies.flatMap((connections) =>
            workloads.map((workload) => {
              const r = result(workload, connections);
              return [
                workload.name,
                connections,
                perSecond(r.requestsPerSecond),
                ms(r.latency.p50),
                ms(r.latency.p99),
                ms(r.latency.max),
                r.latency.samples,
                ratio(r.requestsPerSecond / result(baseline, connections).requestsPerSecond),
                ratio(r.requestsPerSecond / result(apiSync, connections).requestsPerSecond),
              ];
            }),
          );
          tables.push({
            title: `execution: ${loadLength(plan)} per row${plan.requests === undefined ? "" : ` (the baseline: ${plan.seconds} s)`}, one Temporal dev server with its state in ${persistence === "file" ? "a file (flowlog dev's default)" : "memory (FLOWLOG_TEMPORAL_DEV_DB=memory)"}`,
            columns: [
              "workflow",
              "in flight",
              "executions/s",
              "p50 ms",
              "p99 ms",
              "max ms",
              "executions",
              "vs baseline",
              "vs api sync",
            ],
            rows,
            note:
              "HTTP block: POST /api/v1/workflows/{id}/execute through flowlog serve and flowlog worker (loopback " +
              "item API), latency as the API caller sees it. Baseline: client.workflow.execute of a workflow " +
              "with one no-op activity, at the same concurrency. Floor: the same calls through a bare node:http " +
              "server that runs a workflow of one activity fetching the same item (support/bare-execute-server.ts): " +
              "the least an api sync execution of one HTTP block costs, with no key, bucket, store or engine. " +
              "Floor + log: the same, its one activity also writing one log entry through flowlog's store, " +
              "committed with its fsync (D17, D23). " +
              "Goals (issue 12): no-op p50 <= 50 ms and " +
              "HTTP block p50 <= 80 ms at 1 in flight; HTTP block >= 0.8x the baseline's executions/s at 8. " +
              "Tracing on: the same api sync calls on a stack of its own (dev server, flowlog serve and worker; " +
              "with --quick the run's traced one, its dev server in memory) " +
              "whose processes export every span over OTLP to a loopback sink that keeps nothing (D50); goal " +
              "(issue 55): >= 0.9x the api sync rate.",
          });
        } finally {
          await stack.stop();
        }
      }
      return tables;
    } finally {
      await itemApi.close();
    }
  },
};

/**
 * The api sync workload with OpenTelemetry tracing on (D50): a stack of its own, alike but for tracing,
 * and the same one-HTTP-block workflow. With --quick, the run's traced stack, which execution-tracing
 * loads too; its dev server keeps its state in memory, the persistence this bench's quick run otherwise
 * leaves out.
 */
async function openTraced(
  options: BenchOptions,
  persistence: "file" | "memory",
  itemUrl: string,
): Promise<OpenWorkload> {
  const stack = await benchStack(options, {
    persistence: options.quick ? "memory" : persistence,
    traced: true,
  });
  const workflowId = await createHttpBlockWorkflow(stack, itemUrl).catch(async (error: unknown) => {
    await stack.stop();
    throw error;
  });
  return { load: (at) => executeLoad(stack, workflowId, at), close: () => stack.stop() };
}

/** A row's workload: `open` starts the processes it needs; the load then runs at any concurrency. */
interface Workload {
  name: string;
  open(): Promise<OpenWorkload>;
}

interface OpenWorkload {
  load(plan: LoadPlan): Promise<LoadResult>;
  close(): Promise<void>;
}

/**
 * Every workload at every concurrency; the result of each. Full mode takes the workloads in turn at one
 * concurrency, each started just before its load and stopped after it, so a row and its baseline are
 * loaded seconds apart with nothing else running; --quick starts each workload once for both.
 */
async function loadEach(
  workloads: Workload[],
  plan: LoadPlan,
  quick: boolean,
): Promise<(workload: Workload, connections: number) => LoadResult> {
  const results = new Map<string, LoadResult>();
  const key = (workload: Workload, connections: number) => `${workload.name} at ${connections}`;
  const run = async (workload: Workload, at: number[]) => {
    const open = await workload.open();
    try {
      for (const connections of at) {
        results.set(key(workload, connections), await open.load({ ...plan, connections }));
      }
    } finally {
      await open.close();
    }
  };
  if (quick) {
    for (const workload of workloads) await run(workload, concurrencies);
  } else {
    for (const connections of concurrencies) {
      for (const workload of workloads) await run(workload, [connections]);
    }
  }
  return (workload, connections) => results.get(key(workload, connections)) as LoadResult;
}

/** Sync executions through the REST API, as many in flight as the plan has connections. */
export async function executeLoad(
  stack: FlowlogStack,
  workflowId: string,
  plan: LoadPlan,
  onExecuted?: () => void,
): Promise<LoadResult> {
  const target = {
    url: `http://${stack.api}/api/v1/workflows/${workflowId}/execute`,
    method: "POST" as const,
    headers: { ...stack.auth, "content-type": "application/json" },
    body: '{"input": {}}',
  };
  const check = await stack.post<{ output?: { got?: { title?: string } } }>(
    `/api/v1/workflows/${workflowId}/execute`,
    { input: {} },
  );
  if (check.output?.got?.title !== "bench item") {
    throw new Error(`the bench workflow answered ${JSON.stringify(check)}, not the item it fetched`);
  }
  const result = await httpLoad(target, plan, onExecuted);
  if (result.failures > 0) throw new Error(`${result.failures} executions failed under load`);
  return result;
}

/** The baseline, once: see openNoop. */
export async function noopLoad(
  options: BenchOptions,
  temporalAddress: string,
  plan: LoadPlan,
): Promise<LoadResult> {
  const noop = await openNoop(options, temporalAddress);
  try {
    return await noop.load(plan);
  } finally {
    await noop.close();
  }
}

/** The baseline: the no-op workflow on its worker (`noopWorker`), and `connections` closed loops of execute. */
async function openNoop(options: BenchOptions, temporalAddress: string): Promise<OpenWorkload> {
  const worker = await noopWorker(options, temporalAddress);
  const connection = await Connection.connect({ address: temporalAddress });
  const client = new Client({ connection });
  let next = 0;
  const loops = async (connections: number, seconds: number) => {
    const times: number[] = [];
    const until = performance.now() + seconds * 1000;
    const loop = async () => {
      while (performance.now() < until) {
        const started = performance.now();
        await client.workflow.execute<typeof noopWorkflow>("noopWorkflow", {
          taskQueue: noopTaskQueue,
          workflowId: `bench-noop-${process.pid}-${next++}`,
        });
        times.push(performance.now() - started);
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: connections }, loop));
    return { times, seconds: (performance.now() - started) / 1000 };
  };
  return {
    async load(plan) {
      await loops(plan.connections, plan.warmupSeconds);
      const { times, seconds } = await loops(plan.connections, plan.seconds);
      return { requestsPerSecond: times.length / seconds, latency: distribution(times), failures: 0 };
    },
    async close() {
      await connection.close();
      await worker.stop();
    },
  };
}

/**
 * The floor of an api sync execution of one HTTP block (issue 12): autocannon's POSTs, at the same
 * concurrency, to a bare node:http server that starts `fetchWorkflow` on the no-op worker and answers its
 * result; the workflow's one activity GETs `url`, the same loopback item the flowlog workflow reads.
 * `withLog`: `fetchAndLogWorkflow`, whose activity also writes a log entry to the worker's own store.
 */
async function openFloor(
  options: BenchOptions,
  temporalAddress: string,
  url: string,
  withLog = false,
): Promise<OpenWorkload> {
  const [worker, server] = await startTogether([
    noopWorker(options, temporalAddress, withLog),
    startProcess(
      process.execPath,
      [
        ...["--import", "tsx", path.join(repoRoot, "bench/support/bare-execute-server.ts")],
        ...[temporalAddress, url, ...(withLog ? ["log"] : [])],
      ],
      { ready: /execute server on port (\d+)/ },
    ),
  ] as const);
  const target = {
    url: `http://127.0.0.1:${server.ready[1]}/execute`,
    method: "POST" as const,
    headers: { "content-type": "application/json" },
    body: '{"input": {}}',
  };
  return {
    async load(plan) {
      const check = (await (await fetch(target.url, { method: "POST", body: target.body })).json()) as {
        output?: { got?: { title?: string } };
      };
      if (check.output?.got?.title !== "bench item") {
        throw new Error(`the floor workflow answered ${JSON.stringify(check)}, not the item it fetched`);
      }
      const result = await httpLoad(target, plan);
      if (result.failures > 0) throw new Error(`${result.failures} floor executions failed under load`);
      return result;
    },
    async close() {
      await server.stop();
      await worker.stop();
    },
  };
}

/**
 * The no-op workflows' worker for a load on the dev server at `temporalAddress`: in full mode a process
 * started for the load (with the store `fetchAndLog` writes to when `withLog`); with --quick the run's one
 * (`shared`), with the store, serving every no-op workload.
 */
export async function noopWorker(
  options: BenchOptions,
  temporalAddress: string,
  withLog = false,
): Promise<RunningProcess> {
  if (!options.quick) return startNoopWorker(temporalAddress, withLog);
  const worker = await shared(
    `no-op worker on ${temporalAddress}`,
    () => startNoopWorker(temporalAddress, true),
    (started) => started.stop(),
  );
  return { ...worker, stop: async () => undefined };
}

/**
 * The no-op workflows' worker, in a process of its own like `flowlog worker`; `withLog` gives its
 * `fetchAndLog` activity a store to write to.
 */
async function startNoopWorker(temporalAddress: string, withLog = false): Promise<RunningProcess> {
  return startProcess(
    process.execPath,
    [
      ...["--import", "tsx", path.join(repoRoot, "bench/support/noop-worker.ts"), temporalAddress],
      ...[await noopWorkflowBundle(), ...(withLog ? ["log"] : [])],
    ],
    { ready: /noop worker polling/ },
  );
}
