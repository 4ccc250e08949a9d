import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { httpLoad, type LoadPlan, type LoadResult, loadLength, quickApiLoad } from "./support/load.js";
import { benchPostgres } from "./support/postgres.js";
import {
  bootstrapAccount,
  flowlogCli,
  type RunningProcess,
  startFlowlog,
  unlimitedPlanLimits,
} from "./support/processes.js";
import { type Bench, type BenchOptions, ms, perSecond, ratio, type Table } from "./support/report.js";

interface Plan {
  entries: number;
  load: LoadPlan;
}

const plans: Record<"quick" | "full", Plan> = {
  quick: {
    entries: 2_000,
    load: quickApiLoad,
  },
  full: { entries: 100_000, load: { connections: 16, seconds: 10, warmupSeconds: 2 } },
};

/**
 * Issue 15's scaling goal: `flowlog serve` on one PostgreSQL database (D32), one process and then two
 * side by side, under the same total load of keep-alive REST connections split evenly between them (what
 * a load balancer in front does). Goal: two processes >= 1.6x one process's req/s.
 */
export const gatewayPgBench: Bench = {
  name: "gateway-pg",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const server = await benchPostgres(options);
    const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-gateway-pg-"));
    const running: RunningProcess[] = [];
    try {
      const env = {
        FLOWLOG_DATA_DIR: dataDir,
        FLOWLOG_DATABASE_URL: await server.createDatabase(),
        FLOWLOG_MASTER_KEY: randomBytes(32).toString("base64"),
        FLOWLOG_PLAN_LIMITS: unlimitedPlanLimits,
      };
      const { workspaceId, key } = await bootstrapAccount(env);
      await flowlogCli(
        ["seed", "--workspace", workspaceId, "--executions", String(plan.entries), "--seed", "bench"],
        env,
      );
      const serve = async () => {
        const started = await startFlowlog(["serve"], {
          env: { ...env, PORT: "0" },
          ready: /flowlog API at http:\/\/localhost:(\d+)/,
        });
        running.push(started);
        return `http://127.0.0.1:${started.ready[1]}/api/v1/logs?workspaceId=${workspaceId}&limit=100`;
      };
      const headers = { "x-api-key": key };
      const first = await serve();
      const one = await httpLoad({ url: first, headers }, plan.load);
      const second = await serve();
      const half = { ...plan.load, connections: Math.ceil(plan.load.connections / 2) };
      const both = await Promise.all([
        httpLoad({ url: first, headers }, half),
        httpLoad({ url: second, headers }, half),
      ]);
      const failures = one.failures + both.reduce((sum, result) => sum + result.failures, 0);
      if (failures > 0) throw new Error(`${failures} failed calls under load`);
      const twoRate = both.reduce((sum, result) => sum + result.requestsPerSecond, 0);
      const row = (name: string, result: Pick<LoadResult, "requestsPerSecond">, latency: LoadResult) => [
        name,
        perSecond(result.requestsPerSecond),
        ms(latency.latency.p50),
        ms(latency.latency.p99),
        ratio(result.requestsPerSecond / one.requestsPerSecond),
      ];
      const table: Table = {
        title:
          `gateway-pg: GET /api/v1/logs?limit=100 (${plan.entries.toLocaleString("en-US")} entries) on ` +
          `PostgreSQL, ${plan.load.connections} keep-alive connections in all, ${loadLength(plan.load)}`,
        columns: ["flowlog serve", "req/s", "p50 ms", "p99 ms", "vs one process"],
        rows: [
          row("one process", one, one),
          row("two processes (sum)", { requestsPerSecond: twoRate }, both[0] as LoadResult),
        ],
        note:
          "Both processes share one PostgreSQL 15 server (fsync on) and the same two cores with the load " +
          "generator; latency of the two-process row is the first process's. Goal: two >= 1.6x one.",
      };
      return [table];
    } finally {
      await Promise.all(running.map((child) => child.stop()));
      rmSync(dataDir, { recursive: true, force: true });
      await server.stop();
    }
  },
};
