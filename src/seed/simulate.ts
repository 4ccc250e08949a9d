import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { costOf } from "../domain/model-prices.js";
import type { AgentOutput, ApiOutput, BlockOutcome, BlockRequest } from "../engine/execution-types.js";
import type { WorkflowStateJson } from "../engine/json-shapes.js";
import { type GraphRunResult, runGraph, type SideEffectBlocks } from "../engine/run-graph.js";
import type { WorkflowGraph } from "../engine/workflow-graph.js";
import { defaultQuotas } from "../limits/quotas.js";
import type { Trigger } from "../store/records.js";
import { isoFromMs } from "../util/time.js";
import { demoAgentReplies } from "./demo-workflows.js";
import type { Random } from "./random.js";
import { SimulatedClock } from "./simulated-clock.js";

export interface RunStart {
  workspaceId: string;
  startedAt: number;
  trigger: Trigger;
  /** The run fails at one of its calls to the outside world; the engine decides what follows. */
  fail: boolean;
}

/** One execution of a workflow by the engine (D13, D17), its api and agent blocks simulated. */
export interface SimulatedRun {
  run: GraphRunResult;
  endedAt: number;
}

/**
 * Runs the workflow with the real engine (run-graph.ts) on a simulated clock, its side-effect blocks
 * answering from the random source: HTTP statuses and latencies, agent replies and token counts, and
 * failures as the real blocks report them. Spans, final output, usages and failure are the engine's.
 */
export async function simulateRun(rng: Random, graph: WorkflowGraph, start: RunStart): Promise<SimulatedRun> {
  const { state } = graph;
  const clock = new SimulatedClock(start.startedAt);
  const input = triggerInput(rng, state, start);
  const blocks = simulatedBlocks(rng, clock, start.fail ? failingBlock(rng, state) : undefined);
  const run = await clock.run(
    runGraph(graph, {
      workspaceId: start.workspaceId,
      input,
      blocks,
      now: clock.now,
      maxBlockRuns: defaultQuotas.workflow.maxBlockRuns,
    }),
  );
  return { run, endedAt: clock.now() + rng.int(1, 4) };
}

/** The api or agent block a failing run fails at: its first call there. */
function failingBlock(rng: Random, state: WorkflowStateJson): string | undefined {
  const ids = Object.keys(state.blocks).filter((id) => {
    const block = state.blocks[id];
    return block?.enabled !== false && (block?.type === "api" || block?.type === "agent");
  });
  return ids.length === 0 ? undefined : rng.pick(ids);
}

const chatQuestions = [
  "How do I rotate an API key?",
  "Why did my webhook fail?",
  "What does the free plan include?",
];

/** The trigger's payload: the fields the starter asks for (its inputFormat), and what the trigger adds. */
function triggerInput(rng: Random, state: WorkflowStateJson, start: RunStart): JsonObject {
  const starter = Object.values(state.blocks).find((block) => block.type === "starter");
  const format = starter?.config?.inputFormat;
  const seq = rng.int(1000, 99_999);
  const fields: JsonObject = {};
  for (const field of Array.isArray(format) ? format : []) {
    if (!isObject(field) || typeof field.name !== "string") continue;
    const { name } = field;
    if (name === "message") fields[name] = rng.pick(chatQuestions);
    else fields[name] = field.type === "number" ? seq : `${name.toLowerCase()}_${seq}`;
  }
  switch (start.trigger) {
    case "webhook":
      return { event: "record.created", ...fields };
    case "schedule":
      return { scheduledAt: isoFromMs(start.startedAt), ...fields };
    case "chat":
      return { conversationId: `conv_${seq}`, ...fields };
    default:
      return fields;
  }
}

/** HTTP failures as the api block reports them (D16): timeouts and 429/5xx after three retries, a 404 at once. */
const httpFailures: [number | "timeout", number][] = [
  ["timeout", 2],
  [503, 3],
  [502, 1],
  [500, 2],
  [429, 2],
  [404, 1],
];
const statusText: Record<number, string> = {
  404: "Not Found",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};
const retries = 3;
const genericReplies = ["Done.", "I could not find anything on that.", "Here is a short summary."];

/**
 * The api and agent blocks, answering with the outputs the real ones give (ApiOutput, AgentOutput) after
 * a drawn latency on the clock. `failAt` fails its block's first call.
 */
function simulatedBlocks(rng: Random, clock: SimulatedClock, failAt: string | undefined): SideEffectBlocks {
  let failed = false;
  const fails = (request: BlockRequest) => {
    if (failed || request.blockId !== failAt) return false;
    failed = true;
    return true;
  };
  const after = async <Output>(ms: number, outcome: BlockOutcome<Output>): Promise<BlockOutcome<Output>> => {
    await clock.sleep(ms);
    return outcome;
  };
  return {
    api: (request) => (fails(request) ? failedApi() : api()),
    agent: (request) => {
      const model = typeof request.config.model === "string" ? request.config.model : "gpt-4o";
      return fails(request) ? failedAgent(model) : agent(model, request.config.prompt);
    },
  };

  function api(): Promise<BlockOutcome<ApiOutput>> {
    const items = Array.from({ length: rng.int(2, 5) }, () => ({ id: rng.int(1000, 9999) }));
    const output = {
      data: { items, count: items.length },
      status: 200,
      headers: { "content-type": "application/json" },
      error: null,
      attempts: 1,
    };
    return after(attemptMs(180, 0.9), { output });
  }

  function failedApi(): Promise<BlockOutcome<ApiOutput>> {
    const failure = rng.weighted(httpFailures);
    const attempts = failure === 404 ? 1 : retries + 1;
    const waited = attempts === 1 ? 0 : backoff();
    if (failure === "timeout") {
      const error = "request timed out after 30000 ms";
      const output = { data: null, status: null, headers: {}, error, attempts };
      return after(attempts * 30_000 + waited, { output, error });
    }
    const error = `request failed with status ${failure} ${statusText[failure]}`;
    const data = { message: statusText[failure] ?? "" };
    const output = { data, status: failure, headers: {}, error, attempts };
    return after(attemptMs(120, 0.6) * attempts + waited, { output, error });
  }

  function agent(model: string, prompt: JsonValue | undefined): Promise<BlockOutcome<AgentOutput>> {
    const replies = typeof prompt === "string" ? demoAgentReplies[prompt] : undefined;
    const promptTokens = clamp(Math.round(rng.logNormal(900, 0.7)), 40, 120_000);
    const completion = clamp(Math.round(rng.logNormal(220, 0.8)), 5, 8_000);
    const perToken = rng.logNormal(18, 0.35);
    const output = {
      content: rng.pick(replies ?? genericReplies),
      model,
      tokens: { prompt: promptTokens, completion, total: promptTokens + completion },
      cost: costOf(model, promptTokens, completion),
    };
    return after(clamp(Math.round(250 + completion * perToken + promptTokens * 0.02), 100, 180_000), {
      output,
    });
  }

  function failedAgent(model: string): Promise<BlockOutcome<AgentOutput>> {
    const error = rng.pick([
      `agent provider answered HTTP 429: Rate limit reached for ${model} (after ${retries + 1} attempts)`,
      "agent provider answered HTTP 400: This model's maximum context length is 128000 tokens",
      `agent provider did not answer within 60000 ms (after ${retries + 1} attempts)`,
    ]);
    const ms = error.includes("60000") ? (retries + 1) * 60_000 + backoff() : rng.int(80, 600);
    return after<AgentOutput>(ms, { output: { error }, error });
  }

  function attemptMs(median: number, sigma: number): number {
    return clamp(Math.round(rng.logNormal(median, sigma)), 3, 30_000);
  }

  /** D16's exponential backoff with full jitter between the attempts: up to 1 s, 2 s and 4 s. */
  function backoff(): number {
    return rng.int(0, 1000) + rng.int(0, 2000) + rng.int(0, 4000);
  }
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
