import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { costOf, type ModelUsage } from "../domain/model-prices.js";
import type {
  BlockJson,
  LoopJson,
  ParallelJson,
  SpanJson,
  WorkflowStateJson,
} from "../engine/json-shapes.js";
import { normalizeBlockName, ReferenceResolutionError, resolveReferences } from "../engine/references.js";
import type { Trigger } from "../store/records.js";
import { isoFromMs } from "../util/time.js";
import type { Random } from "./random.js";

/** What one simulated execution of a workflow produced (D17). */
export interface SimulatedRun {
  spans: SpanJson[];
  usages: ModelUsage[];
  finalOutput: JsonValue;
  failed: boolean;
  endedAt: number;
}

export interface RunStart {
  startedAt: number;
  trigger: Trigger;
  /** The run fails at one of its blocks; it stops there, as a real execution would. */
  fail: boolean;
}

interface Timed {
  span: SpanJson;
  end: number;
}

/** Any stored state, read leniently: a workflow made by hand may lack the parts a demo graph has. */

export function simulateRun(rng: Random, state: WorkflowStateJson, start: RunStart): SimulatedRun {
  return new Simulation(rng, state, start).run();
}

const maxSteps = 100;
const agentReplies = [
  "urgent",
  "routine",
  "The customer cannot log in after the password reset; the reset token expired.",
  "Three articles cover the new pricing; two cover the outage on Tuesday.",
  "Score: 82. Company size and role match the ideal customer profile.",
  "Open Settings, then API keys, and create a key for the workspace.",
];
const chatQuestions = [
  "How do I rotate an API key?",
  "Why did my webhook fail?",
  "What does the free plan include?",
];
const httpStatusText: Record<number, string> = {
  404: "Not Found",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

/**
 * Walks a workflow graph the way the runtime will (D13, D17): from the starter along the edges, a
 * condition choosing its branch by sourceHandle, loop iterations and parallel branches as children of a
 * grouping span. Block outputs are recorded under their normalized names so later `<block.path>`
 * references resolve as D14 describes.
 */
class Simulation {
  private readonly usages: ModelUsage[] = [];
  private readonly outputs: Record<string, JsonValue> = {};
  private failed = false;
  private branch: string | undefined;
  private lastOutput: JsonValue = null;
  private responseOutput: JsonValue | undefined;

  constructor(
    private readonly rng: Random,
    private readonly state: WorkflowStateJson,
    private readonly start: RunStart,
  ) {}

  run(): SimulatedRun {
    const spans: SpanJson[] = [];
    let clock = this.start.startedAt;
    let node = this.entry();
    for (let step = 0; node !== undefined && !this.failed && step < maxSteps; step++) {
      const timed = this.runNode(node, clock, "");
      if (timed) {
        spans.push(timed.span);
        clock = timed.end;
      }
      node = this.next(node);
    }
    return {
      spans,
      usages: this.usages,
      finalOutput: this.responseOutput ?? this.lastOutput,
      failed: this.failed,
      endedAt: clock + this.rng.int(1, 4),
    };
  }

  private entry(): string | undefined {
    const ids = Object.keys(this.state.blocks);
    return ids.find((id) => this.state.blocks[id]?.type === "starter") ?? ids[0];
  }

  private next(node: string): string | undefined {
    const out = this.state.edges.filter((e) => e.source === node);
    const chosen = this.branch === undefined ? undefined : out.find((e) => e.sourceHandle === this.branch);
    this.branch = undefined;
    return (chosen ?? out.find((e) => e.sourceHandle === undefined) ?? out[0])?.target;
  }

  private runNode(id: string, at: number, suffix: string): Timed | undefined {
    const loop = this.state.loops[id];
    if (loop) return this.runLoop(id + suffix, loop, at);
    const parallel = this.state.parallels[id];
    if (parallel) return this.runParallel(id + suffix, parallel, at);
    const block = this.state.blocks[id];
    return block?.enabled ? this.runBlock(id + suffix, block, at) : undefined;
  }

  private runLoop(id: string, loop: LoopJson, at: number): Timed {
    const collection = loop.collection === undefined ? undefined : this.resolve(loop.collection);
    const iterations = Array.isArray(collection)
      ? collection.length
      : (loop.iterations ?? this.rng.int(2, 4));
    const children: SpanJson[] = [];
    let clock = at + this.rng.int(0, 2);
    run: for (let i = 0; i < iterations; i++) {
      for (const node of loop.nodes) {
        const timed = this.runNode(node, clock, `-i${i}`);
        if (!timed) continue;
        children.push(timed.span);
        clock = timed.end;
        if (timed.span.status === "error") break run;
      }
    }
    return this.group(id, "loop", at, clock + 1, { type: loop.type, iterations }, children);
  }

  private runParallel(id: string, parallel: ParallelJson, at: number): Timed {
    const collection = parallel.collection === undefined ? undefined : this.resolve(parallel.collection);
    const branches = Array.isArray(collection) ? collection.length : (parallel.count ?? 2);
    const children: SpanJson[] = [];
    let end = at;
    for (let b = 0; b < branches; b++) {
      let clock = at + this.rng.int(0, 3);
      for (const node of parallel.nodes) {
        const timed = this.runNode(node, clock, `-b${b}`);
        if (!timed) continue;
        children.push(timed.span);
        clock = timed.end;
        if (timed.span.status === "error") break;
      }
      end = Math.max(end, clock);
    }
    return this.group(id, "parallel", at, end + 1, { type: parallel.type, branches }, children);
  }

  private group(
    id: string,
    type: string,
    start: number,
    end: number,
    input: JsonObject,
    children: SpanJson[],
  ) {
    const error = children.find((c) => c.status === "error")?.error;
    const span = this.span(
      { id, name: id, type, start, end, input, output: { completed: children.length } },
      error,
    );
    return { span: { ...span, children }, end };
  }

  private runBlock(id: string, block: BlockJson, at: number): Timed {
    const start = at + this.rng.int(0, 2);
    const fails = this.start.fail && !this.failed && this.mayFailAt(block.type);
    const run = this.blockRun(block, fails);
    const end = start + run.durationMs;
    const output = run.output;
    this.outputs[normalizeBlockName(block.name)] = output;
    this.lastOutput = output;
    if (block.type === "response" && !fails) this.responseOutput = output;
    if (fails) this.failed = true;
    const error = fails ? run.error : undefined;
    const span = this.span(
      { id, name: block.name, type: block.type, start, end, input: run.input, output },
      error,
    );
    return { span: { ...span, ...run.agent }, end };
  }

  /**
   * Calls to the outside world fail now and then; a run meant to fail that reaches its condition or
   * response unharmed fails there on a reference it cannot resolve (D14), so every failing run ends in error.
   */
  private mayFailAt(type: string): boolean {
    if (type === "api" || type === "agent") return this.rng.chance(0.4);
    return type === "condition" || type === "response";
  }

  private blockRun(block: BlockJson, fails: boolean): BlockRun {
    const config = block.config ?? {};
    switch (block.type) {
      case "starter": {
        const input = this.triggerInput();
        return { durationMs: this.rng.int(0, 2), input, output: input };
      }
      case "api":
        return fails ? this.failedApi(config) : this.api(config);
      case "agent":
        return this.agent(config, fails);
      case "condition":
        return fails ? this.unresolvable(config) : this.condition(config);
      case "response":
        return fails ? this.unresolvable(config) : this.response(config);
      default:
        return { durationMs: Math.round(this.rng.logNormal(20, 1)), input: config, output: {} };
    }
  }

  private triggerInput(): JsonObject {
    const { trigger, startedAt } = this.start;
    const seq = this.rng.int(1000, 99_999);
    switch (trigger) {
      case "api":
        return { input: { requestId: `req_${seq}` } };
      case "webhook":
        return { body: { event: "record.created", id: seq } };
      case "schedule":
        return { scheduledAt: isoFromMs(startedAt) };
      case "manual":
        return { input: {} };
      case "chat":
        return { message: this.rng.pick(chatQuestions), conversationId: `conv_${seq}` };
    }
  }

  private api(config: JsonObject): BlockRun {
    const items = Array.from({ length: this.rng.int(2, 5) }, () => ({ id: this.rng.int(1000, 9999) }));
    return {
      durationMs: clamp(Math.round(this.rng.logNormal(180, 0.9)), 3, 30_000),
      input: { method: config.method ?? "GET", url: config.url ?? "" },
      output: {
        data: { items, count: items.length },
        status: 200,
        headers: { "content-type": "application/json" },
      },
    };
  }

  /** The failures D16 retries (timeouts, 429, 5xx: three retries with backoff) and one it does not (404). */
  private failedApi(config: JsonObject): BlockRun {
    const input = { method: config.method ?? "GET", url: config.url ?? "" };
    const failure = this.rng.weighted<number | "timeout">([
      ["timeout", 2],
      [503, 3],
      [502, 1],
      [500, 2],
      [429, 2],
      [404, 1],
    ]);
    if (failure === "timeout") {
      const error = "request timed out after 30000 ms (3 retries)";
      return { durationMs: 120_000 + this.backoff(), input, output: { error }, error };
    }
    const retried = failure !== 404;
    const error = `HTTP ${failure} ${httpStatusText[failure]}${retried ? " after 3 retries" : ""}`;
    const attempt = () => clamp(Math.round(this.rng.logNormal(120, 0.6)), 3, 30_000);
    return {
      durationMs: retried ? attempt() * 4 + this.backoff() : attempt(),
      input,
      output: { data: { message: httpStatusText[failure] ?? "" }, status: failure, headers: {}, error },
      error,
    };
  }

  /** Three waits of D16's exponential backoff with full jitter: up to 1 s, 2 s and 4 s. */
  private backoff(): number {
    return this.rng.int(0, 1000) + this.rng.int(0, 2000) + this.rng.int(0, 4000);
  }

  private agent(config: JsonObject, fails: boolean): BlockRun {
    const model = typeof config.model === "string" ? config.model : "gpt-4o";
    const input = { model, prompt: this.resolve(config.prompt ?? "") };
    if (fails) {
      const error = this.rng.pick([
        `429 rate limit reached for ${model}`,
        "context_length_exceeded: the prompt is longer than the model's context window",
        "upstream timed out after 60000 ms",
      ]);
      const durationMs = error.startsWith("upstream") ? 60_000 : this.rng.int(80, 600);
      const tokens = { prompt: 0, completion: 0, total: 0 };
      return { durationMs, input, output: { error }, error, agent: { model, tokens, cost: 0 } };
    }
    const prompt = clamp(Math.round(this.rng.logNormal(900, 0.7)), 40, 120_000);
    const completion = clamp(Math.round(this.rng.logNormal(220, 0.8)), 5, 8_000);
    this.usages.push({ model, promptTokens: prompt, completionTokens: completion });
    const tokens = { prompt, completion, total: prompt + completion };
    const perToken = this.rng.logNormal(18, 0.35);
    return {
      durationMs: clamp(Math.round(250 + completion * perToken + prompt * 0.02), 100, 180_000),
      input,
      output: { content: this.rng.pick(agentReplies) },
      agent: { model, tokens, cost: costOf(model, prompt, completion).total },
    };
  }

  /** The first branch of its ConditionConfig three times in four, else the last (D13). */
  private condition(config: JsonObject): BlockRun {
    const branches = Array.isArray(config.conditions) ? config.conditions : [];
    const ids = branches.map((branch) => (isObject(branch) ? branch.id : undefined));
    const result = this.rng.chance(0.75);
    const id = result ? ids[0] : ids.at(-1);
    this.branch = typeof id === "string" ? id : undefined;
    return {
      durationMs: this.rng.int(1, 5),
      input: config,
      output: { result, selectedPath: this.branch ?? null },
    };
  }

  private response(config: JsonObject): BlockRun {
    const data = this.resolve(config.data ?? {});
    return {
      durationMs: this.rng.int(0, 2),
      input: { data: config.data ?? {} },
      output: { data, status: 200, headers: { "content-type": "application/json" } },
    };
  }

  private unresolvable(config: JsonObject): BlockRun {
    const reference = /<[^>]+>/.exec(JSON.stringify(config))?.[0] ?? "<start.input>";
    const error = `unresolvable reference ${reference}`;
    return { durationMs: this.rng.int(1, 5), input: config, output: { error }, error };
  }

  /** References resolved by the engine's resolver (D14); a value it cannot resolve stays as written. */
  private resolve(value: JsonValue): JsonValue {
    try {
      return resolveReferences(value, { outputs: this.outputs }) as JsonValue;
    } catch (error) {
      if (error instanceof ReferenceResolutionError) return value;
      throw error;
    }
  }

  /** A span in the protobuf JSON of TraceSpan; `error` is present exactly when the block failed. */
  private span(
    part: {
      id: string;
      name: string;
      type: string;
      start: number;
      end: number;
      input: JsonValue;
      output: JsonValue;
    },
    error: string | undefined,
  ): SpanJson {
    return {
      id: part.id,
      name: part.name,
      type: part.type,
      status: error === undefined ? "success" : "error",
      startTime: isoFromMs(part.start),
      endTime: isoFromMs(part.end),
      durationMs: part.end - part.start,
      input: part.input,
      output: part.output,
      ...(error === undefined ? {} : { error }),
      children: [],
    };
  }
}

interface BlockRun {
  durationMs: number;
  input: JsonValue;
  output: JsonValue;
  error?: string;
  /** Agent blocks only (D17). */
  agent?: { model: string; tokens: { prompt: number; completion: number; total: number }; cost: number };
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
