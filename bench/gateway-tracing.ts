import { execFileSync } from "node:child_process";
import { mkdtempSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Goal, measureGoalsInPairs } from "./gateway.js";
import { httpLoad, type LoadPlan, type LoadResult, quickApiLoad } from "./support/load.js";
import {
  bootstrapAccount,
  flowlogCli,
  type RunningProcess,
  startFlowlog,
  unlimitedPlanLimits,
} from "./support/processes.js";
import { type Receiver, startOtlpSink } from "./support/receiver.js";
import type { Bench, BenchOptions, Table } from "./support/report.js";

/**
 * Issue 55's gateway goal (D50) alone: the gateway bench's REST list and one entry, from a `flowlog serve`
 * with tracing off and one with it on, in more turned pairs than the gateway bench's five and without its
 * other targets, so the goal can be read in a few minutes, on the tree before a change and after it, and
 * under either Node the project supports (`node scripts/node24.mjs npm run bench -- gateway-tracing`
 * serves from Node 24: the servers run on the bench's own Node, which the table's title names).
 */
const plans: Record<"quick" | "full", { entries: number; load: LoadPlan; pairs: number }> = {
  quick: {
    entries: 2_000,
    load: { ...quickApiLoad, seconds: 0.4, warmupSeconds: 0.1 },
    pairs: 1,
  },
  full: { entries: 100_000, load: { connections: 10, seconds: 4, warmupSeconds: 1 }, pairs: 9 },
};
const goal: Goal = { target: "REST, tracing on", against: "REST", rateAtLeast: 0.9, cpuPerAnswer: true };

export const gatewayTracingBench: Bench = {
  name: "gateway-tracing",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-gateway-tracing-"));
    const running: RunningProcess[] = [];
    let otlpSink: Receiver | undefined;
    try {
      const env = { FLOWLOG_DATA_DIR: dataDir, FLOWLOG_PLAN_LIMITS: unlimitedPlanLimits };
      const { workspaceId, key } = await bootstrapAccount(env);
      const seed = [
        "seed",
        "--workspace",
        workspaceId,
        "--executions",
        String(plan.entries),
        "--seed",
        "bench",
      ];
      await flowlogCli(seed, env);
      otlpSink = await startOtlpSink();
      const ready = /flowlog API at http:\/\/localhost:(\d+)/;
      const off = await startFlowlog(["serve"], { env: { ...env, PORT: "0" }, ready });
      running.push(off);
      const on = await startFlowlog(["serve"], {
        env: { ...env, PORT: "0", OTEL_EXPORTER_OTLP_ENDPOINT: otlpSink.url },
        ready,
      });
      running.push(on);
      const headers = { "x-api-key": key };
      const loadsOf = (restPath: string) =>
        new Map<string, () => Promise<LoadResult>>(
          [
            ["REST", off],
            ["REST, tracing on", on],
          ].map(([name, server]) => {
            const { ready: port, pid } = server as RunningProcess;
            const target = { url: `http://127.0.0.1:${port[1]}${restPath}`, headers };
            return [name as string, () => httpLoad(target, { ...plan.load, serverPid: pid })];
          }),
        );
      const list = `/api/v1/logs?workspaceId=${workspaceId}&limit=100`;
      const page = await fetch(`http://127.0.0.1:${off.ready[1]}${list}`, { headers });
      const logId = ((await page.json()) as { data: { id: string }[] }).data[0]?.id;
      const served = `flowlog serve on Node ${nodeVersionOf(off.pid)} and ${nodeVersionOf(on.pid)}`;
      const tables: Table[] = [];
      for (const [title, restPath] of [
        [`GET /api/v1/logs?limit=100 (${plan.entries.toLocaleString("en-US")} entries)`, list],
        ["GET /api/v1/logs/{id}", `/api/v1/logs/${logId}`],
      ] as const) {
        const table = await measureGoalsInPairs(title, [goal], loadsOf(restPath), plan);
        const note =
          "Each pair loads the two servers one after the other, as the gateway bench does (10 keep-alive " +
          "connections from autocannon); its ratios are tracing on's rate and server CPU time per answer " +
          "(every thread, /proc) over tracing off's. Tracing on exports every span to a loopback OTLP sink " +
          "that keeps nothing.";
        tables.push({ ...table, title: `${table.title}; ${served}`, note });
      }
      return tables;
    } finally {
      await Promise.all(running.map((child) => child.stop()));
      await otlpSink?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

/** The version of the Node binary a process runs, read from its executable: the bench's Node, checked. */
function nodeVersionOf(pid: number): string {
  return execFileSync(readlinkSync(`/proc/${pid}/exe`), ["--version"], { encoding: "utf8" }).trim();
}
