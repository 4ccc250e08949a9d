import { type Dispatcher, fetch } from "undici";
import { z } from "zod";
import { outboundRefusalOf } from "../security/outbound.js";
import {
  costOf,
  defaultModelPrices,
  type PriceTable,
  type TokenCost,
} from "../services/pricing/model-prices.js";
import type { TokenCounts } from "../store/records.js";
import { innermostMessage, retryAfterMs, retryDelay } from "./retry.js";

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

export interface AgentCallOptions {
  /** Retries after the first attempt, for 429, 5xx, timeouts and connection failures. */
  retries: number;
  /** For one attempt, from sending the request to reading the whole answer. */
  timeoutMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  sleep: (ms: number) => Promise<void>;
  /** In [0, 1): the jitter of the backoff. */
  random: () => number;
  /** The D22 guard from createOutboundDispatcher; the engine always passes it. */
  dispatcher?: Dispatcher;
  prices: PriceTable;
}

/** The backoff of D16's HTTP-request block; answers from language models take longer, hence the timeout. */
const defaults: AgentCallOptions = {
  retries: 3,
  timeoutMs: 60_000,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
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
  options: Partial<AgentCallOptions> = {},
): Promise<AgentOutput> {
  const settings = { ...defaults, ...options };
  const request = chatRequest(config, provider);
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptCall(request, provider.apiKey, settings);
    if (!("failure" in outcome)) return outcome;
    const { failure } = outcome;
    if (!failure.retryable || attempt > settings.retries) {
      const tries = attempt > 1 ? ` (after ${attempt} attempts)` : "";
      throw new AgentBlockError(failure.code, `${failure.message}${tries}`, failure.status);
    }
    const backoff = { baseMs: settings.baseDelayMs, maxMs: settings.maxDelayMs };
    await settings.sleep(retryDelay(attempt - 1, failure.retryAfterMs, backoff, settings.random));
  }
}

interface ChatRequest {
  url: string;
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

function completionsUrl(baseUrl: string): string {
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    throw new AgentBlockError("invalid_config", "the agent provider's base URL is not an http(s) URL");
  }
  return `${baseUrl.replace(/\/+$/, "")}/v1/chat/completions`;
}

async function attemptCall(
  request: ChatRequest,
  apiKey: string,
  settings: AgentCallOptions,
): Promise<AgentOutput | { failure: Failure }> {
  let status: number;
  let headers: Headers;
  let answer: string;
  try {
    const response = await fetch(request.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        ...(apiKey === "" ? {} : { authorization: `Bearer ${apiKey}` }),
      },
      body: request.body,
      // The key goes to the configured provider only: a redirect is an answer, never followed.
      redirect: "manual",
      signal: AbortSignal.timeout(settings.timeoutMs),
      ...(settings.dispatcher ? { dispatcher: settings.dispatcher } : {}),
    });
    ({ status, headers } = response);
    answer = await response.text();
  } catch (error) {
    return { failure: transportFailure(error, request.url, settings.timeoutMs) };
  }
  if (status < 200 || status > 299) return { failure: httpFailure(status, headers, answer, apiKey) };
  return readCompletion(answer, request.model, settings.prices);
}

function transportFailure(error: unknown, url: string, timeoutMs: number): Failure {
  const refusal = outboundRefusalOf(error);
  if (refusal) return { code: "outbound_refused", message: refusal.message, retryable: false };
  if (hasName(error, "TimeoutError")) {
    return {
      code: "provider_timeout",
      message: `agent provider did not answer within ${timeoutMs} ms`,
      retryable: true,
    };
  }
  const reason = innermostMessage(error);
  return {
    code: "provider_unreachable",
    message: `agent provider ${origin(url)} unreachable: ${reason}`,
    retryable: true,
  };
}

function httpFailure(status: number, headers: Headers, answer: string, apiKey: string): Failure {
  const detail = redact(providerMessage(answer), apiKey).slice(0, 300);
  return {
    code: "provider_http_error",
    message: `agent provider answered HTTP ${status}${detail === "" ? "" : `: ${detail}`}`,
    retryable: status === 429 || status >= 500,
    status,
    retryAfterMs: retryAfterMs(headers.get("retry-after")),
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

function readCompletion(
  answer: string,
  askedModel: string,
  prices: PriceTable,
): AgentOutput | { failure: Failure } {
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

/** Providers may echo the key they refused; it must not reach a log (D24). Done before any truncation. */
function redact(text: string, apiKey: string): string {
  return apiKey === "" ? text : text.replaceAll(apiKey, "[redacted]");
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

function hasName(error: unknown, name: string): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) if (cause.name === name) return true;
  return false;
}

function origin(url: string): string {
  return new URL(url).origin;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
