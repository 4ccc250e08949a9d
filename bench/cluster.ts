import { executeLoad } from "./execution.js";
import { type ClusterStack, startClusterStack } from "./support/cluster-stack.js";
import { benchStack, createHttpBlockWorkflow, type FlowlogStack } from "./support/flowlog-stack.js";
import {
  httpLoad,
  type LoadPlan,
  type LoadResult,
  loadLength,
  quickApiLoad,
  quickExecutionLoad,
} from "./support/load.js";
import { flowlogCli } from "./support/processes.js";
import { startItemApi } from "./support/receiver.js";
import { type Bench, type BenchOptions, ms, perSecond, ratio, type Table } from "./support/report.js";

interface Plan {
  execution: LoadPlan;
  entries: number;
  gateway: LoadPlan;
}

const plans: Record<"quick" | "full", Plan> = {
  quick: {
    execution: quickExecutionLoad,
    entries: 500,
    gateway: quickApiLoad,
  },
  full: {
    execution: { connections: 8, seconds: 20, warmupSeconds: 3 },
    entries: 20_000,
    gateway: { connections: 10, seconds: 10, warmupSeconds: 2 },
  },
};

/**
 * Issue 16: the reference cluster (`flowlog cluster up`: PostgreSQL, a Temporal server, two serve replicas,
 * a worker of each role, nginx) against the dev-server stack of the execution bench, in the same run. The
 * one-HTTP-block api sync execution at one and eight in flight on each; then the logs list through nginx
 * with both serve replicas and with one (the other stopped, as in a rolling restart).
 */
export const clusterBench: Bench = {
  name: "cluster",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const itemApi = await startItemApi();
    try {
      const executions: Record<string, LoadResult[]> = {};
      const run = async (name: string, stack: FlowlogStack) => {
        const workflowId = await createHttpBlockWorkflow(stack, `${itemApi.url}/items/1`);
        executions[name] = [];
        for (const connections of [1, 8]) {
          executions[name]?.push(await executeLoad(stack, workflowId, { ...plan.execution, connections }));
        }
      };
      const devStack = await benchStack(options);
      try {
        await run("dev server (SQLite, flowlog dev's Temporal)", devStack);
      } finally {
        await devStack.stop();
      }
      // One cluster for both tables: starting one costs a PostgreSQL, a Temporal server and five processes.
      const cluster = await startClusterStack();
      let gatewayTable: Table;
      try {
        await run("cluster (PostgreSQL, Temporal server, 2 serve, a worker per role, nginx)", cluster);
        gatewayTable = await gatewayThroughNginx(cluster, plan);
      } finally {
        await cluster.stop();
      }
      const [devName, clusterName] = Object.keys(executions) as [string, string];
      const dev = executions[devName] as LoadResult[];
      const executionTable: Table = {
        title: `cluster: one-HTTP-block api sync executions, ${loadLength(plan.execution)} per row`,
        columns: ["deployment", "in flight", "executions/s", "p50 ms", "p99 ms", "max ms", "vs dev server"],
        rows: Object.entries(executions).flatMap(([name, results]) =>
          results.map((result, i) => [
            name,
            i === 0 ? 1 : 8,
            perSecond(result.requestsPerSecond),
            ms(result.latency.p50),
            ms(result.latency.p99),
            ms(result.latency.max),
            ratio(result.requestsPerSecond / (dev[i] as LoadResult).requestsPerSecond),
          ]),
        ),
        note:
          `POST /api/v1/workflows/{id}/execute (keep-alive, autocannon); on the cluster through nginx. ` +
          `${clusterName} shares the machine's two cores among all its processes.`,
      };
      return [executionTable, gatewayTable];
    } finally {
      await itemApi.close();
    }
  },
};

/** The logs list through nginx's port, with two serve replicas, then with one, then two again. */
async function gatewayThroughNginx(cluster: ClusterStack, plan: Plan): Promise<Table> {
  await flowlogCli(
    ["seed", "--workspace", cluster.workspaceId, "--executions", String(plan.entries), "--seed", "bench"],
    cluster.env,
  );
  const target = {
    url: `http://${cluster.api}/api/v1/logs?workspaceId=${cluster.workspaceId}&limit=100`,
    headers: cluster.auth,
  };
  const two = await httpLoad(target, plan.gateway);
  await cluster.stopPart("flowlog-serve-2");
  const one = await httpLoad(target, plan.gateway);
  // Started again, as after a rolling restart: the first row's figure is not a cold start's.
  await cluster.restartStopped();
  const twoAgain = await httpLoad(target, plan.gateway);
  const failures = two.failures + one.failures + twoAgain.failures;
  if (failures > 0) throw new Error(`${failures} failed calls under load`);
  const row = (name: string, result: LoadResult) => [
    name,
    perSecond(result.requestsPerSecond),
    ms(result.latency.p50),
    ms(result.latency.p99),
    ratio(result.requestsPerSecond / one.requestsPerSecond),
  ];
  return {
    title:
      `cluster: GET /api/v1/logs?limit=100 (${plan.entries.toLocaleString("en-US")} entries seeded) through nginx, ` +
      `${plan.gateway.connections} keep-alive connections, ${loadLength(plan.gateway)}`,
    columns: ["serve replicas", "req/s", "p50 ms", "p99 ms", "vs one replica"],
    rows: [row("two", two), row("one (the other stopped)", one), row("two (it started again)", twoAgain)],
    note:
      "nginx balances each request over the replicas; PostgreSQL, the Temporal server, both workers and " +
      "the load generator run on the same two cores.",
  };
}
