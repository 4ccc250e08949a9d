import { executionCost } from "../domain/model-prices.js";
import { asWorkflowState } from "../engine/json-shapes.js";
import { WorkflowGraph } from "../engine/workflow-graph.js";
import type { ExecutionRecord, Trigger, WorkflowRecord } from "../store/records.js";
import type { Random } from "./random.js";
import { simulateRun } from "./simulate.js";

export interface GenerateRequest {
  workflows: WorkflowRecord[];
  count: number;
  /** Starts fall within the `days` before `now`. */
  days: number;
  now: number;
  /** Whose usage the cost counts against (D12); null for demo data (seed.ts), which counts against none. */
  billedUserId: string | null;
}

const dayMs = 86_400_000;
const minuteMs = 60_000;
/** api is the common way in, then schedules, webhooks, manual runs and chat (D15). */
const triggerWeights: [Trigger, number][] = [
  ["api", 45],
  ["schedule", 22],
  ["webhook", 15],
  ["manual", 10],
  ["chat", 8],
];
const errorRate = 0.08;
/** A share of starts comes in bursts that share one millisecond, the case keyset paging must get right (D8). */
const burstRate = 0.03;
const fileRate = 0.02;
/**
 * Executions simulated at once, each on its own clock and its own fork of the random source, so the
 * data does not depend on how they interleave; together they share the turns of the event loop their
 * clocks move on (simulated-clock.ts).
 */
const concurrentRuns = 64;

/**
 * Realistic executions for the given workflows, reproducible from the random source. Starts are spread
 * evenly over the window with jitter, oldest first, some in bursts of 2 to 10 on the exact same
 * millisecond; scheduled runs snap back to the whole minute, as a cron fires. Each is a run of the engine
 * (simulate.ts). A generator, so a million rows never sit in memory.
 */
export async function* generateExecutions(
  rng: Random,
  request: GenerateRequest,
): AsyncGenerator<ExecutionRecord> {
  const { workflows, count, days, now } = request;
  if (workflows.length === 0) return;
  // One graph per workflow, built once: each serves every run of its workflow.
  const graphs = new Map(workflows.map((w) => [w.id, new WorkflowGraph(asWorkflowState(w.state))]));
  // Busy workflows and quiet ones: the n-th is picked in proportion to 1/(n+1).
  const popularity = workflows.map((w, n) => [w, 1 / (n + 1)] as const);
  const windowStart = now - days * dayMs + minuteMs;
  // Half an hour's room at the end, more than the slowest demo graph's worst case, so no run is still going at `now`.
  const slotMs = (now - 30 * minuteMs - windowStart) / count;
  const running: Promise<ExecutionRecord>[] = [];
  for (let index = 0; index < count; ) {
    const size = rng.chance(burstRate) ? Math.min(rng.int(2, 10), count - index) : 1;
    const trigger = rng.weighted(triggerWeights);
    const at = Math.floor(windowStart + (index + rng.next()) * slotMs);
    const startedAt = trigger === "schedule" ? at - (at % minuteMs) : at;
    for (let k = 0; k < size; k++) {
      const workflow = rng.weighted(popularity);
      const graph = graphs.get(workflow.id) as WorkflowGraph;
      running.push(execution(rng.fork(), request, workflow, graph, trigger, startedAt));
    }
    index += size;
    if (running.length >= concurrentRuns) yield* await Promise.all(running.splice(0));
  }
  yield* await Promise.all(running);
}

async function execution(
  rng: Random,
  request: GenerateRequest,
  workflow: WorkflowRecord,
  graph: WorkflowGraph,
  trigger: Trigger,
  startedAt: number,
): Promise<ExecutionRecord> {
  const id = rng.id("log");
  const executionId = rng.id("ex");
  const { workspaceId } = workflow;
  const start = { workspaceId, startedAt, trigger, fail: rng.chance(errorRate) };
  const { run, endedAt } = await simulateRun(rng, graph, start);
  return {
    entry: {
      id,
      workspaceId,
      workflowId: workflow.id,
      folderId: workflow.folderId,
      executionId,
      billedUserId: request.billedUserId,
      // D17: the level follows the outcome.
      level: run.status === "error" ? "error" : "info",
      trigger,
      startedAt,
      endedAt,
      totalDurationMs: endedAt - startedAt,
      cost: executionCost(run.usages),
      files: rng.chance(fileRate) ? [reportFile(rng, executionId)] : null,
      traceSpans: run.spans,
      finalOutput: run.finalOutput,
    },
    workflowState: workflow.state,
  };
}

function reportFile(rng: Random, executionId: string) {
  return {
    name: "report.pdf",
    type: "application/pdf",
    size: rng.int(20_000, 2_000_000),
    key: `executions/${executionId}/report.pdf`,
  };
}
