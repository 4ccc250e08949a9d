import { Headers } from "undici";
import { z } from "zod";
import { costOf, defaultModelPrices, type PriceTable, type TokenCost } from "../domain/model-prices.js";
import { defaultQuotas } from "../limits/quotas.js";
import { exchange, type OutboundReply } from "../outbound/exchange.js";
import { OutboundFailure } from "../outbound/failure.js";
import { createRedactor } from "../outbound/redaction.js";
import { type Attempted, type RetryLoopOptions, withRetries } from "../outbound/retry-loop.js";
import { isRetryableStatus, retryAfterMs } from "../outbound/retry-policy.js";
import { parseOutboundUrl } from "../outbound/url-policy.js";
import type { TokenCounts } from "../store/records.js";

/**
 * The agent block (D13): one call to an OpenAI-compatible chat-completions endpoint, priced from the
 * answer's usage with the model price table. It runs as an activity; the engine resolves references in the
 * config first (D14) and passes the workspace's provider (base URL and key from an environment variable).
 */

/** A prompt that is exactly one reference resolves to the referenced value's type (D14); a prompt is text. */
const text = z.preprocess((value) => (typeof value === "string" ? value : JSON.stringify(value)), z.string());

const configSchema = z
  .object({
    model: z.string().min(1),
    systemPrompt: text.optional(),
    /** Earlier turns, sent between the system prompt and the prompt. */
    messages: z.array(z.object({ role: z.enum(["system", "user", "assistant"]), content: text })).optional(),
    prompt: text.optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().positive().optional(),
  })
  .refine((config) => chatMessages(config).length > 0, {
    error: "give a prompt, a systemPrompt or messages",
  });

/** The config once its references are resolved; the engine may pass it as it stands (a Struct's JSON). */
export type AgentBlockConfig = z.output<typeof configSchema>;

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** The workspace's chat-completions provider: requests go to `{baseUrl}/v1/chat/completions`. */
export interface AgentProvider {
  baseUrl: string;
  /** Sent as a bearer token; empty for a provider that needs none. Never part of an error (D24). */
  apiKey: string;
}

/** The block's outputs, `<agent.content>` and the rest, and what its span records (D17). */
export interface AgentOutput {
  content: string;
  /** The model as the provider answered, often a dated name such as gpt-4o-2024-08-06. */
  model: string;
  tokens: TokenCounts;
  cost: TokenCost;
}

export interface AgentCallOptions extends RetryLoopOptions {
  /** D22: FLOWLOG_ALLOW_PRIVATE_NETWORKS; the provider's address is judged like every outbound target's. */
  allowPrivateNetworks: boolean;
  /** Retries after the first attempt, for 429, 5xx, timeouts and connection failures. */
  retries: number;
  /** For one attempt, from sending the request to reading the whole answer. */
  timeoutMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** D26: the most of an answer that is read, decoded; a longer one fails the block. */
  replyLimitBytes: number;
  prices: PriceTable;
}

/** What a caller sets: whether private networks are reachable (D22) always, the rest when it differs. */
export type AgentCallSettings = Partial<AgentCallOptions> & Pick<AgentCallOptions, "allowPrivateNetworks">;

/** The backoff of D16's HTTP-request block; answers from language models take longer, hence the timeout. */
const defaults: Omit<AgentCallOptions, "allowPrivateNetworks"> = {
  retries: 3,
  timeoutMs: 60_000,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  replyLimitBytes: defaultQuotas.replyBytes.block,
  prices: defaultModelPrices,
};

export type AgentErrorCode =
  | "invalid_config"
  | "provider_http_error"
  | "provider_bad_answer"
  | "provider_timeout"
  | "provider_unreachable"
  | "outbound_refused";

/** Why the block failed; the message is meant for the execution's log and never holds the key (D24). */
export class AgentBlockError extends Error {
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    /** The provider's HTTP status, for provider_http_error. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "AgentBlockError";
  }
}

export async function runAgentBlock(
  config: unknown,
  provider: AgentProvider,
  options: AgentCallSettings,
): Promise<AgentOutput> {
  const settings = { ...defaults, ...options };
  const request = chatRequest(config, provider);
  const schedule = { retries: settings.retries, baseMs: settings.baseDelayMs, maxMs: settings.maxDelayMs };
  const { result, attempts } = await withRetries(schedule, settings, () =>
    attemptCall(request, provider.apiKey, settings),
  );
  if (!("failure" in result)) return result;
  const { failure } = result;
  const tries = attempts.length > 1 ? ` (after ${attempts.length} attempts)` : "";
  throw new AgentBlockError(failure.code, `${failure.message}${tries}`, failure.status);
}

interface ChatRequest {
  url: URL;
  body: string;
  /** The model asked for, reported when the answer names none. */
  model: string;
}

interface Failure {
  code: AgentErrorCode;
  message: string;
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
}

function chatRequest(config: unknown, provider: AgentProvider): ChatRequest {
  const parsed = configSchema.safeParse(config);
  if (!parsed.success)
    throw new AgentBlockError("invalid_config", `agent block config: ${issues(parsed.error)}`);
  const { model, temperature, maxTokens } = parsed.data;
  const body = { model, messages: chatMessages(parsed.data), temperature, max_tokens: maxTokens };
  return { url: completionsUrl(provider.baseUrl), body: JSON.stringify(body), model };
}

function chatMessages(config: {
  systemPrompt?: string | undefined;
  messages?: ChatMessage[] | undefined;
  prompt?: string | undefined;
}): ChatMessage[] {
  return [
    ...(config.systemPrompt === undefined ? [] : [{ role: "system" as const, content: config.systemPrompt }]),
    ...(config.messages ?? []),
    ...(config.prompt === undefined ? [] : [{ role: "user" as const, content: config.prompt }]),
  ];
}

function completionsUrl(baseUrl: string): URL {
  const url = parseOutboundUrl(`${baseUrl.replace(/\/+$/, "")}/v1/chat/completions`);
  if (!(url instanceof URL)) {
    throw new AgentBlockError("invalid_config", `the agent provider's base URL ${url.problem}`);
  }
  return url;
}

type CallResult = AgentOutput | { failure: Failure };

async function attemptCall(
  request: ChatRequest,
  apiKey: string,
  settings: AgentCallOptions,
): Promise<Attempted<CallResult>> {
  const headers = new Headers({ "content-type": "application/json", accept: "application/json" });
  if (apiKey !== "") headers.set("authorization", `Bearer ${apiKey}`);
  let reply: OutboundReply;
  try {
    // The key goes to the configured provider only: a redirect is an answer, never followed.
    reply = await exchange(
      { method: "POST", url: request.url, headers, body: request.body },
      {
        allowPrivateNetworks: settings.allowPrivateNetworks,
        timeoutMs: settings.timeoutMs,
        signal: settings.signal,
        replyLimit: { bytes: settings.replyLimitBytes, beyond: "fail" },
      },
    );
  } catch (error) {
    return attempted(null, { failure: transportFailure(error, request.url, settings.timeoutMs) });
  }
  return attempted(reply.status, answerOf(reply, request.model, apiKey, settings.prices));
}

function attempted(status: number | null, result: CallResult): Attempted<CallResult> {
  if (!("failure" in result)) return { result, status, error: null, retryable: false };
  const { failure } = result;
  const { message: error, retryable, retryAfterMs } = failure;
  return { result, status, error, retryable, retryAfterMs };
}

function answerOf(reply: OutboundReply, askedModel: string, apiKey: string, prices: PriceTable): CallResult {
  const answer = new TextDecoder().decode(reply.body);
  if (reply.status < 200 || reply.status > 299) return { failure: httpFailure(reply, answer, apiKey) };
  return readCompletion(answer, askedModel, prices);
}

/** The caller's cancellation is not the provider's failure: it ends the block as it is. */
function transportFailure(error: unknown, url: URL, timeoutMs: number): Failure {
  if (!(error instanceof OutboundFailure)) throw error;
  switch (error.kind) {
    case "timeout":
      return {
        code: "provider_timeout",
        message: `agent provider did not answer within ${timeoutMs} ms`,
        retryable: true,
      };
    case "unreachable":
      return {
        code: "provider_unreachable",
        message: `agent provider ${url.origin} unreachable: ${error.message}`,
        retryable: true,
      };
    case "refused":
      return { code: "outbound_refused", message: error.message, retryable: false };
    default:
      return { code: "provider_bad_answer", message: `agent provider's ${error.message}`, retryable: false };
  }
}

function httpFailure(reply: OutboundReply, answer: string, apiKey: string): Failure {
  // Providers may echo the key they refused; it must not reach a log (D24). Masked before any truncation.
  const detail = createRedactor([apiKey]).text(providerMessage(answer)).slice(0, 300);
  return {
    code: "provider_http_error",
    message: `agent provider answered HTTP ${reply.status}${detail === "" ? "" : `: ${detail}`}`,
    retryable: isRetryableStatus(reply.status),
    status: reply.status,
    retryAfterMs: retryAfterMs(reply.headers.get("retry-after")),
  };
}

const completionSchema = z.object({
  model: z.string().optional(),
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
  usage: z.object({
    prompt_tokens: z.number().int().nonnegative(),
    completion_tokens: z.number().int().nonnegative(),
    total_tokens: z.number().int().nonnegative().optional(),
  }),
});

function readCompletion(answer: string, askedModel: string, prices: PriceTable): CallResult {
  const parsed = completionSchema.safeParse(parseJson(answer));
  if (!parsed.success) {
    const message = `agent provider's answer is not a chat completion: ${issues(parsed.error)}`;
    return { failure: { code: "provider_bad_answer", message, retryable: false } };
  }
  const { choices, usage } = parsed.data;
  const model = parsed.data.model ?? askedModel;
  const prompt = usage.prompt_tokens;
  const completion = usage.completion_tokens;
  return {
    content: choices[0]?.message.content ?? "",
    model,
    tokens: { prompt, completion, total: usage.total_tokens ?? prompt + completion },
    cost: costOf(model, prompt, completion, prices),
  };
}

/** OpenAI-compatible providers put a human message in `error.message`; others answer plain text. */
function providerMessage(answer: string): string {
  const body = parseJson(answer);
  const error = isRecord(body) ? body.error : undefined;
  const message = isRecord(error) ? error.message : (error ?? (isRecord(body) ? body.message : undefined));
  const text = typeof message === "string" ? message : answer;
  return text.trim();
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function issues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
