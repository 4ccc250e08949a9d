import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { ModelUsage } from "../domain/model-prices.js";
import { ownValue } from "../util/own-property.js";
import { type ContainerRun, runLoop, runParallel, type WalkScope } from "./containers.js";
import type {
  AgentOutput,
  ApiOutput,
  BlockOutcome,
  BlockRequest,
  ExecutionStatus,
  ReusedOutputs,
} from "./execution-types.js";
import type { BlockJson, SpanJson, WorkflowStateJson } from "./json-shapes.js";
import { type ResponseOutput, runCondition, runResponse } from "./local-blocks.js";
import { OutputFrame } from "./output-frame.js";
import { normalizeBlockName, resolveReferences } from "./references.js";
import { RunBudget } from "./run-budget.js";
import { traceSpan } from "./trace-span.js";
import { errorHandle, type Scope, WorkflowGraph } from "./workflow-graph.js";

/**
 * The execution engine's walk of a workflow graph (D13): deterministic, free of I/O, so the Temporal
 * workflow can run it and replay it. Blocks with side effects reach the outside only through
 * `SideEffectBlocks`, which the workflow backs with activities.
 *
 * - The walk starts at the starter and runs each node of a scope in topological order once some taken
 *   edge reaches it. A block that succeeds takes its edges without a sourceHandle and, for a condition,
 *   those of the branch it chose (for other blocks, any handle but `error`). A disabled block is skipped
 *   and the walk goes on along its edges without a sourceHandle.
 * - A failed block takes its `error` edges; without one, its scope fails, and with it the enclosing loop or
 *   parallel, and so on up to the execution.
 * - A loop or parallel is one node whose members form a scope of their own, run per iteration or branch
 *   (containers.ts); its output goes under its id.
 * - Outputs are keyed by normalized block name (D14); every block run is a trace span, and the runs inside
 *   a container are the children of its span, ids suffixed `-i<iteration>` / `-b<branch>` (D17).
 * - An execution makes at most `maxBlockRuns` block runs (D26): the block that would exceed it does not
 *   run, and the execution ends in error there, whatever error edges say.
 */
export interface SideEffectBlocks {
  api(request: BlockRequest): Promise<BlockOutcome<ApiOutput>>;
  agent(request: BlockRequest): Promise<BlockOutcome<AgentOutput>>;
}

export interface GraphRunOptions {
  workspaceId: string;
  /** The trigger's payload, the starter's output. */
  input: JsonValue;
  blocks: SideEffectBlocks;
  /** The workflow clock: deterministic time in Temporal workflows. */
  now(): number;
  /** D26: the most block runs this execution may make. */
  maxBlockRuns: number;
  /**
   * D47: recorded runs of HTTP and agent blocks, by span id, taken instead of running those blocks again
   * (a retry resumed from its failed block). A reused agent block adds no model usage: it cost once.
   */
  reused?: ReusedOutputs;
}

export interface GraphRunResult {
  status: ExecutionStatus;
  error?: string;
  spans: SpanJson[];
  /** D17: the response block's output, else the last block's. */
  finalOutput: JsonValue;
  httpStatus: number;
  /** What a sync api or chat trigger answers with: the response block's data, else the final output. */
  httpBody: JsonValue;
  usages: ModelUsage[];
}

/**
 * A prebuilt graph of the workflow may stand for its state, to run the same workflow many times. Rejects
 * with an InterruptedRun when a side-effect block rejected (the workflow was cancelled).
 */
export async function runGraph(
  workflow: WorkflowStateJson | WorkflowGraph,
  options: GraphRunOptions,
): Promise<GraphRunResult> {
  const graph = workflow instanceof WorkflowGraph ? workflow : new WorkflowGraph(workflow);
  return new GraphRun(graph, options).run();
}

/**
 * A side-effect block rejected instead of resolving to an outcome: the execution itself must stop (the
 * workflow was cancelled). It passes every catch below untouched, unlike the errors of pure code (a bad
 * config, an unresolvable reference), which fail the node they concern.
 */
class Interrupted extends Error {
  constructor(readonly reason: unknown) {
    super("execution interrupted");
  }
}

/**
 * How a run that was interrupted ends: why (the rejection), and the spans of the top-level nodes that
 * ended before it, the starter's among them, so a cancelled execution's entry still shows its input and
 * what ran (D47: a retry reads them).
 */
export class InterruptedRun extends Error {
  constructor(
    readonly reason: unknown,
    readonly spans: SpanJson[],
  ) {
    super("execution interrupted");
  }
}

function isNodeFailure(error: unknown): error is Error {
  return error instanceof Error && !(error instanceof Interrupted);
}

interface Step {
  error?: string;
  /** A condition's choice: the branch id, or null when no branch held. */
  branch?: string | null;
  skipped?: boolean;
}

interface BlockRun {
  input: unknown;
  output: unknown;
  error?: string;
  branch?: string | null;
  agent?: { model: string; tokens: AgentOutput["tokens"]; cost: number };
}

class GraphRun {
  private readonly usages: ModelUsage[] = [];
  private readonly budget: RunBudget;
  private response: ResponseOutput | undefined;

  constructor(
    private readonly graph: WorkflowGraph,
    private readonly options: GraphRunOptions,
  ) {
    this.budget = new RunBudget(options.maxBlockRuns);
  }

  async run(): Promise<GraphRunResult> {
    const top = new OutputFrame({}, "", []);
    let error: string | undefined;
    try {
      error = await this.walk(undefined, top);
    } catch (failure) {
      if (failure instanceof Interrupted) throw new InterruptedRun(failure.reason, top.spans);
      // The top level's own shape is wrong (no starter, a cycle): nothing ran, the execution fails.
      if (!isNodeFailure(failure)) throw failure;
      error = failure.message;
    }
    const finalOutput = (this.response ?? top.lastOutput ?? null) as JsonValue;
    return {
      status: error === undefined ? "success" : "error",
      ...(error === undefined ? {} : { error }),
      spans: top.spans,
      finalOutput,
      httpStatus: error === undefined ? (this.response?.status ?? 200) : 500,
      httpBody: (this.response ? this.response.data : finalOutput) as JsonValue,
      usages: this.usages,
    };
  }

  /** Runs a scope; resolves to the error that failed it, or undefined. */
  private async walk(container: string | undefined, frame: OutputFrame): Promise<string | undefined> {
    const scope = this.graph.scope(container);
    const reached = new Set(scope.entries);
    for (const node of scope.order) {
      if (!reached.has(node)) continue;
      const step = await this.runNode(node, frame);
      if (this.budget.exhausted !== undefined) return this.budget.exhausted;
      const next = takenEdges(scope, node, step);
      if (next === undefined) return step.error;
      for (const target of next) reached.add(target);
    }
    return undefined;
  }

  private runNode(id: string, frame: OutputFrame): Promise<Step> {
    const { blocks, loops, parallels } = this.graph.state;
    const loop = ownValue(loops, id);
    if (loop) {
      return this.runContainer(id, "loop", frame, (spans) => runLoop(id, loop, frame, spans, this.iterate));
    }
    const parallel = ownValue(parallels, id);
    if (parallel) {
      const walk: WalkScope = (container, inner) => this.walk(container, inner);
      return this.runContainer(id, "parallel", frame, (spans) =>
        runParallel(id, parallel, frame, spans, walk),
      );
    }
    const block = ownValue(blocks, id);
    if (!block)
      return Promise.resolve({ error: `an edge leads to ${id}, which is not a block of this workflow` });
    if (block.enabled === false) return Promise.resolve({ skipped: true });
    if (!this.budget.take()) return Promise.resolve({ error: this.budget.exhausted });
    return this.runBlock(id, block, frame);
  }

  /**
   * One loop iteration. One that ran no block (its members disabled, an inner loop over an empty list)
   * still takes a run, so a forEach over a long list cannot spin without bound inside one workflow task.
   */
  private readonly iterate: WalkScope = async (container, frame) => {
    const before = this.budget.used;
    const error = await this.walk(container, frame);
    if (error !== undefined || this.budget.used !== before || this.budget.take()) return error;
    return this.budget.exhausted;
  };

  private async runBlock(id: string, block: BlockJson, frame: OutputFrame): Promise<Step> {
    const start = this.options.now();
    const run = await this.blockRun(id, block, frame);
    const { name, type } = block;
    const { input, output, error, agent } = run;
    const end = this.options.now();
    frame.spans.push(
      traceSpan({ id: id + frame.suffix, name, type, start, end, input, output, error, agent }),
    );
    frame.set(normalizeBlockName(name), run.output);
    return { error: run.error, branch: run.branch };
  }

  private async blockRun(id: string, block: BlockJson, frame: OutputFrame): Promise<BlockRun> {
    const config = block.config ?? {};
    switch (block.type) {
      case "api":
        return this.reusedRun(id, frame) ?? this.sideEffect(this.options.blocks.api, id, config, frame);
      case "agent":
        return this.reusedRun(id, frame) ?? this.agentRun(id, config, frame);
      default:
        return this.localRun(id, block.type, config, frame);
    }
  }

  /** The block's recorded run in this iteration and branch, when the execution reuses it (D47). */
  private reusedRun(id: string, frame: OutputFrame): BlockRun | undefined {
    const recorded = this.options.reused && ownValue(this.options.reused, id + frame.suffix);
    return recorded && { input: recorded.input, output: recorded.output };
  }

  private localRun(id: string, type: string, config: JsonObject, frame: OutputFrame): BlockRun {
    const references = this.graph.referencesOf(id);
    const input = type === "starter" ? this.options.input : displayConfig(config, frame);
    try {
      switch (type) {
        case "starter":
          return { input, output: this.options.input };
        case "condition":
          return { input, ...runCondition(config, frame.outputs, references) };
        case "response": {
          const { output } = runResponse(config, frame.outputs, references);
          this.response = output;
          return { input, output };
        }
        default:
          throw new Error(`unknown block type "${type}"`);
      }
    } catch (error) {
      if (!isNodeFailure(error)) throw error;
      return failedRun(input, error.message);
    }
  }

  private async agentRun(id: string, config: JsonObject, frame: OutputFrame): Promise<BlockRun> {
    const run = await this.sideEffect(this.options.blocks.agent, id, config, frame);
    if (run.error !== undefined) return run;
    const { model, tokens, cost } = run.output as AgentOutput;
    this.usages.push({ model, promptTokens: tokens.prompt, completionTokens: tokens.completion });
    return { ...run, agent: { model, tokens, cost: cost.total } };
  }

  /**
   * The activity gets the config as written and the outputs it references, and resolves both kinds of
   * reference itself (D24: secrets only there). Block references are resolved here too, for the span's
   * input and to fail an unresolvable one (D14) without starting an activity.
   */
  private async sideEffect<Output>(
    run: (request: BlockRequest) => Promise<BlockOutcome<Output>>,
    blockId: string,
    config: JsonObject,
    frame: OutputFrame,
  ): Promise<BlockRun> {
    let input: unknown;
    try {
      input = resolveReferences(config, { outputs: frame.outputs });
    } catch (error) {
      if (!isNodeFailure(error)) throw error;
      return failedRun(config, error.message);
    }
    const outputs = Object.fromEntries(
      this.graph
        .referencesOf(blockId)
        .blocks.filter((name) => Object.hasOwn(frame.outputs, name))
        .map((name) => [name, frame.outputs[name]]),
    );
    const request = { workspaceId: this.options.workspaceId, blockId, config, outputs };
    const outcome = await run(request).catch((reason: unknown) => {
      throw new Interrupted(reason);
    });
    return { input, ...outcome };
  }

  /** A loop or parallel as one node: one span with its runs as children, its output `{results}`. */
  private async runContainer(
    id: string,
    type: "loop" | "parallel",
    frame: OutputFrame,
    body: (children: SpanJson[]) => Promise<ContainerRun>,
  ): Promise<Step> {
    const start = this.options.now();
    const children: SpanJson[] = [];
    let run: ContainerRun;
    try {
      run = await body(children);
    } catch (error) {
      if (!isNodeFailure(error)) throw error;
      run = { input: undefined, results: [], error: error.message };
    }
    const { input, results, error } = run;
    const output = { results };
    const end = this.options.now();
    frame.spans.push(
      traceSpan({ id: id + frame.suffix, name: id, type, start, end, input, output, error, children }),
    );
    frame.set(normalizeBlockName(id), output);
    return { error };
  }
}

/** The edges a node's outcome takes; undefined when it failed with no error edge to take. */
function takenEdges(scope: Scope, node: string, step: Step): string[] | undefined {
  const taken = scope.edgesFrom(node).filter(({ sourceHandle: handle }) => {
    if (step.error !== undefined) return handle === errorHandle;
    if (handle === undefined) return true;
    if (step.skipped || handle === errorHandle) return false;
    return step.branch === undefined || handle === step.branch;
  });
  if (step.error !== undefined && taken.length === 0) return undefined;
  return taken.map((e) => e.target);
}

function failedRun(input: unknown, error: string): BlockRun {
  return { input, output: { error }, error };
}

/** The span's input: the config with block references resolved where they can be, `{{NAME}}` as written. */
function displayConfig(config: JsonObject, frame: OutputFrame): unknown {
  try {
    return resolveReferences(config, { outputs: frame.outputs });
  } catch {
    return config;
  }
}
