import type {
  AgentOutput,
  ApiOutput,
  BlockOutcome,
  BlockRequest,
  FirstTry,
} from "../../engine/execution-types.js";
import { findReferences } from "../../engine/references.js";
import { executionContext, failSpan, inSpan, type Span } from "../../logging/tracing.js";

/**
 * D50: a span per run of a block with side effects, the child of its execution's span (which the log write
 * records when the execution ends, under ids made from the execution's id and its caller's trace context,
 * logging/tracing.ts) and the parent of the block's HTTP exchanges. An HTTP block's first try and the block activity that
 * takes over from it are a span each. Its attributes are the block's id and type, the execution and the
 * workspace, and what the block answered: the status, the attempts, and for an agent block OpenTelemetry's
 * GenAI attributes (the model asked for as written, the model that answered, the tokens) and its cost in
 * USD. Never its config as resolved, its inputs or its outputs, where `{{NAME}}` values may be (D24).
 */
export function inBlockSpan<T>(
  type: "api" | "agent",
  request: BlockRequest,
  executionId: string,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const attributes = {
    "flowlog.block.id": request.blockId,
    "flowlog.block.type": type,
    "flowlog.execution.id": executionId,
    "flowlog.workspace.id": request.workspaceId,
    ...(type === "agent" ? agentRequestAttributes(request.config) : {}),
  };
  return inSpan(
    `block ${type}`,
    { attributes, parent: executionContext(executionId, request.traceContext) },
    fn,
  );
}

/** The HTTP block's answer, or that it handed its retries over. */
export function recordApiTry(span: Span | undefined, tried: FirstTry<ApiOutput>): void {
  if (!span) return;
  if ("handOff" in tried) {
    span.setAttribute("flowlog.block.handed_off", true);
    return;
  }
  const { output, error } = tried.outcome;
  const { status, attempts } = (output ?? {}) as Partial<ApiOutput>;
  if (typeof status === "number") span.setAttribute("http.response.status_code", status);
  if (typeof attempts === "number") span.setAttribute("flowlog.block.attempts", attempts);
  if (error !== undefined) failSpan(span, "block_failed");
}

/** The agent block's model, tokens and cost, as the GenAI conventions name them. */
export function recordAgentOutcome(span: Span | undefined, outcome: BlockOutcome<AgentOutput>): void {
  if (!span) return;
  if (outcome.error !== undefined) {
    failSpan(span, "block_failed");
    return;
  }
  const { model, tokens, cost } = outcome.output;
  span.setAttributes({
    "gen_ai.response.model": model,
    "gen_ai.usage.input_tokens": tokens.prompt,
    "gen_ai.usage.output_tokens": tokens.completion,
    "flowlog.block.cost_usd": cost.total,
  });
}

/**
 * The model as the workflow names it: one written with a reference is left out, its value being a
 * workspace variable's or another block's output.
 */
function agentRequestAttributes(config: Record<string, unknown>): Record<string, string> {
  const { model } = config;
  const attributes: Record<string, string> = { "gen_ai.operation.name": "chat" };
  if (typeof model !== "string") return attributes;
  const { env, blocks } = findReferences(model);
  if (env.length === 0 && blocks.length === 0) attributes["gen_ai.request.model"] = model;
  return attributes;
}
