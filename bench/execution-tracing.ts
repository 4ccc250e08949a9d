import { executeLoad } from "./execution.js";
import { benchStack, createHttpBlockWorkflow } from "./support/flowlog-stack.js";
import { type LoadPlan, type LoadResult, loadLength, quickTickMs } from "./support/load.js";
import { startItemApi } from "./support/receiver.js";
import { type Bench, type BenchOptions, ms, perSecond, ratio } from "./support/report.js";

/**
 * Issue 55's goal for traces (D50), alone: the execution bench's api sync row with tracing off and on, in
 * turned rounds (off then on, then on then off), so that a busy machine weighs on both sides alike. The
 * execution bench measures the same pair once among its other rows; this one repeats it, which is what
 * reading a ratio of 0.9x on two shared cores takes, and is short enough to run on the tree before a
 * change and after it, round for round.
 */
const plans: Record<"quick" | "full", { rounds: number; plan: LoadPlan }> = {
  quick: {
    rounds: 1,
    plan: {
      connections: 1,
      seconds: 0.5,
      warmupSeconds: 0.25,
      tickMs: quickTickMs,
      requests: 2,
      warmupRequests: 0,
    },
  },
  full: { rounds: 3, plan: { connections: 1, seconds: 8, warmupSeconds: 2 } },
};
const concurrencies = [1, 8];
type Side = "off" | "on";

export const executionTracingBench: Bench = {
  name: "execution-tracing",
  async run(options: BenchOptions) {
    const { rounds, plan } = options.quick ? plans.quick : plans.full;
    const itemApi = await startItemApi();
    const itemUrl = `${itemApi.url}/items/1`;
    const results: Array<Record<Side, LoadResult[]>> = [];
    try {
      for (let round = 0; round < rounds; round++) {
        const sides: Side[] = round % 2 === 0 ? ["off", "on"] : ["on", "off"];
        const found = {} as Record<Side, LoadResult[]>;
        for (const side of sides) found[side] = await loadSide(options, side, itemUrl, plan);
        results.push(found);
      }
    } finally {
      await itemApi.close();
    }
    const median = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const middle = Math.floor(sorted.length / 2);
      return sorted.length % 2
        ? (sorted[middle] as number)
        : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
    };
    const rows = concurrencies.flatMap((connections, c) => {
      const rate = (side: Side) => results.map((r) => (r[side][c] as LoadResult).requestsPerSecond);
      const ratios = results.map(
        (r) => (r.on[c] as LoadResult).requestsPerSecond / (r.off[c] as LoadResult).requestsPerSecond,
      );
      return (["off", "on"] as const).map((side) => [
        `tracing ${side}`,
        connections,
        perSecond(median(rate(side))),
        rate(side)
          .map((value) => value.toFixed(1))
          .join(" "),
        ms(median(results.map((r) => (r[side][c] as LoadResult).latency.p50))),
        side === "on" ? ratio(median(ratios)) : "",
        side === "on" ? ratios.map((value) => value.toFixed(2)).join(" ") : "",
      ]);
    });
    return [
      {
        title: `execution-tracing: ${rounds} turned round(s) of ${loadLength(plan)} per row${options.quick ? "" : ", Temporal dev server in memory"}`,
        columns: [
          "api sync",
          "in flight",
          "executions/s (median)",
          "each round",
          "p50 ms",
          "on / off",
          "each round",
        ],
        rows,
        note:
          "One-HTTP-block workflow by POST /api/v1/workflows/{id}/execute, as the execution bench's api sync row; " +
          "each side a stack of its own (dev server in memory, flowlog serve and worker), tracing on exporting " +
          "every span over OTLP to a loopback sink that keeps nothing. Goal (issue 55): on >= 0.9x off." +
          (options.quick
            ? " With --quick, the run's shared stacks; the off side's dev server keeps its state in a file."
            : ""),
      },
    ];
  },
};

/**
 * One side's stack, loaded at each concurrency in turn, then stopped. With --quick, the run's stacks: the
 * traced one (dev server in memory) for the on side, and the run's first, whose dev server keeps its state
 * in a file, for the off side, rather than a stack started for one side of one short load.
 */
async function loadSide(
  options: BenchOptions,
  side: Side,
  itemUrl: string,
  plan: LoadPlan,
): Promise<LoadResult[]> {
  const traced = side === "on";
  const stack = await benchStack(options, {
    persistence: traced || !options.quick ? "memory" : "file",
    traced,
  });
  try {
    const workflowId = await createHttpBlockWorkflow(stack, itemUrl);
    const found: LoadResult[] = [];
    for (const connections of concurrencies) {
      found.push(await executeLoad(stack, workflowId, { ...plan, connections }));
    }
    return found;
  } finally {
    await stack.stop();
  }
}
