import { STATUS_CODES } from "node:http";
import { Headers } from "undici";
import { findReferences } from "../engine/references.js";
import { defaultQuotas, type Quotas } from "../limits/quotas.js";
import { exchange, type OutboundReply, type OutboundRequest } from "../outbound/exchange.js";
import { OutboundFailure } from "../outbound/failure.js";
import {
  type AttemptRecord,
  type RetryLoopOptions,
  type RetryResume,
  withRetries,
} from "../outbound/retry-loop.js";
import { isRetryableStatus, retryAfterMs } from "../outbound/retry-policy.js";
import { parseOutboundUrl } from "../outbound/url-policy.js";

export const httpMethods = ["GET", "POST", "PUT", "DELETE", "PATCH"] as const;
export type HttpMethod = (typeof httpMethods)[number];

export type PairValue = string | number | boolean;
/** Key-value pairs as the block keeps them: a list (repeated keys allowed) or an object. */
export type KeyValuePairs =
  | ReadonlyArray<{ readonly key: string; readonly value: PairValue }>
  | Readonly<Record<string, PairValue>>;

/**
 * The block's configuration after the engine substituted its references (D14). Values arrive from a
 * protobuf Struct, so every field is checked at run time whatever its declared type.
 */
export interface HttpRequestConfig {
  method: string;
  url: string;
  pathParams?: Readonly<Record<string, PairValue>>;
  query?: KeyValuePairs;
  headers?: KeyValuePairs;
  body?: unknown;
  retries?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  timeoutMs?: number;
  /**
   * D50: with tracing on, send the W3C trace context (`traceparent`) so the API's own spans join the
   * execution's trace; true unless set to false.
   */
  propagateTraceContext?: boolean;
}

export interface HttpRequestOptions extends RetryLoopOptions {
  allowPrivateNetworks: boolean;
  /** D26's bounds on the block's settings and on its reply; the defaults when absent. */
  quotas?: Pick<Quotas, "httpBlock" | "replyBytes">;
  /** Lower-case names of the headers written with a `{{secret}}` (secretHeaderNames): kept from other origins. */
  secretHeaders?: ReadonlySet<string>;
}

/**
 * The block's outputs (<api.data>, <api.status>, <api.headers>, <api.error>). Every key is always present,
 * null when there is nothing to report, so a later block's reference to it resolves (D14).
 */
export interface HttpRequestResult {
  data: unknown;
  status: number | null;
  headers: Record<string, string>;
  error: string | null;
  /** Attempts in all, those made before a resumed run included. */
  attempts: number;
  /** This run's attempts. */
  timings: AttemptRecord[];
  /** Set when the run stopped before a retry, as `handOffRetries` asked: where to resume. */
  handedOff?: RetryResume | undefined;
}

/** A configuration the block cannot run with; no request was sent. */
export class HttpRequestConfigError extends Error {
  readonly code = "invalid_http_request_config";

  constructor(
    readonly field: string,
    detail: string,
  ) {
    super(`${field} ${detail}`);
    this.name = "HttpRequestConfigError";
  }
}

/** D16. */
export const httpRequestDefaults = { retries: 3, retryBaseMs: 1000, retryMaxMs: 30_000, timeoutMs: 30_000 };
/** Enough for http-to-https and trailing-slash hops; a longer chain is a loop or a misconfiguration. */
const maxRedirects = 5;

/**
 * Runs the HTTP-request block (D16). Throws HttpRequestConfigError before sending anything when the
 * configuration is unusable; every failure of the request itself is reported in `error` instead.
 */
export async function runHttpRequest(
  config: HttpRequestConfig,
  options: HttpRequestOptions,
): Promise<HttpRequestResult> {
  const quotas = options.quotas ?? defaultQuotas;
  const request = prepareRequest(config);
  const policy = policyOf(config, quotas.httpBlock);
  const exchangeOptions = {
    allowPrivateNetworks: options.allowPrivateNetworks,
    timeoutMs: policy.timeoutMs,
    signal: options.signal,
    replyLimit: { bytes: quotas.replyBytes.block, beyond: "fail" as const },
    redirects: { maxHops: maxRedirects, secretHeaders: options.secretHeaders ?? new Set<string>() },
    propagateTrace: propagatesTrace(config.propagateTraceContext),
  };
  const schedule = { retries: policy.retries, baseMs: policy.retryBaseMs, maxMs: policy.retryMaxMs };
  const { result, attempts, handedOff } = await withRetries(schedule, options, async () => {
    const outcome = await exchange(request, exchangeOptions).then(answered, (error: unknown) => {
      if (!(error instanceof OutboundFailure)) throw error;
      return failed(error, policy.timeoutMs);
    });
    return { result: outcome, ...outcome };
  });
  const { data, status, headers, error } = result;
  const total = (options.resume?.attemptsDone ?? 0) + attempts.length;
  return { data, status, headers, error, attempts: total, timings: attempts, handedOff };
}

/**
 * The names of the headers whose name or value is written with a `{{NAME}}` reference, given the config as
 * written and as resolved (D14, D24). The two have the same shape, since resolving keeps every pair in place.
 */
export function secretHeaderNames(
  written: { headers?: unknown },
  resolved: { headers?: unknown },
): Set<string> {
  const writtenPairs = entriesOf(written.headers as KeyValuePairs | undefined);
  return new Set(
    entriesOf(resolved.headers as KeyValuePairs | undefined)
      .filter((_, index) => findReferences(writtenPairs[index]).env.length > 0)
      .flatMap(([name]) => (typeof name === "string" ? [name.toLowerCase()] : [])),
  );
}

interface AttemptOutcome extends Pick<HttpRequestResult, "data" | "status" | "headers" | "error"> {
  retryable: boolean;
  retryAfterMs?: number | undefined;
}

type RetryPolicy = typeof httpRequestDefaults;

function prepareRequest(config: HttpRequestConfig): OutboundRequest {
  const method = methodOf(config.method);
  const headers = headersOf(config.headers);
  return { method, url: urlOf(config), headers, body: bodyOf(config.body, method, headers) };
}

function methodOf(value: unknown): HttpMethod {
  const method = typeof value === "string" ? value.toUpperCase() : "";
  const known = httpMethods.find((candidate) => candidate === method);
  if (!known) throw new HttpRequestConfigError("method", `must be one of ${httpMethods.join(", ")}`);
  return known;
}

const pathParameter = /\{([A-Za-z_][\w.-]*)\}/g;

/** The URL's text never goes into an error message: a {{SECRET}} may have been substituted into it (D24). */
function urlOf(config: HttpRequestConfig): URL {
  if (typeof config.url !== "string" || config.url.trim() === "") {
    throw new HttpRequestConfigError("url", "is required");
  }
  const filled = config.url.trim().replace(pathParameter, (_, name: string) => {
    const value = config.pathParams?.[name];
    if (value === undefined) throw new HttpRequestConfigError("pathParams", `has no value for {${name}}`);
    return encodeURIComponent(textOf("pathParams", value));
  });
  const url = parseOutboundUrl(filled);
  if (!(url instanceof URL)) throw new HttpRequestConfigError("url", url.problem);
  appendQuery(url, config.query);
  return url;
}

/** Appended as encoded text, not through searchParams, which would re-encode the URL's own query. */
function appendQuery(url: URL, query: KeyValuePairs | undefined): void {
  const pairs = pairsOf("query", query).map(
    ([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`,
  );
  if (pairs.length > 0) url.search = [url.search.slice(1), ...pairs].filter(Boolean).join("&");
}

function headersOf(pairs: KeyValuePairs | undefined): Headers {
  const headers = new Headers();
  for (const [name, value] of pairsOf("headers", pairs)) {
    try {
      headers.append(name, value);
    } catch {
      throw new HttpRequestConfigError("headers", `has an invalid name or value for ${JSON.stringify(name)}`);
    }
  }
  return headers;
}

/** A row left blank in the editor is no pair; a value without a key is a mistake worth naming. */
function pairsOf(field: string, pairs: KeyValuePairs | undefined | null): Array<[string, string]> {
  return entriesOf(pairs).flatMap(([key, value]): Array<[string, string]> => {
    if (key === "" && (value === "" || value === undefined)) return [];
    if (typeof key !== "string" || key === "")
      throw new HttpRequestConfigError(field, "has a pair without a key");
    return [[key, textOf(field, value)]];
  });
}

/** Pairs as [key, value], unchecked: a list of {key, value} or an object. */
function entriesOf(pairs: KeyValuePairs | undefined | null): Array<[unknown, unknown]> {
  if (pairs === undefined || pairs === null) return [];
  return Array.isArray(pairs)
    ? pairs.map((pair: { key?: unknown; value?: unknown }) => [pair?.key, pair?.value])
    : Object.entries(pairs);
}

function textOf(field: string, value: unknown): string {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    return String(value);
  throw new HttpRequestConfigError(field, "values must be strings, numbers or booleans");
}

const methodsWithBody: ReadonlySet<HttpMethod> = new Set(["POST", "PUT", "PATCH"]);

/**
 * JSON unless the caller set a non-JSON content type for a text body (D16). A content type the caller set
 * is never replaced.
 */
function bodyOf(body: unknown, method: HttpMethod, headers: Headers): string | undefined {
  if (body === undefined || body === null || body === "") return undefined;
  if (!methodsWithBody.has(method)) {
    throw new HttpRequestConfigError("body", `is sent only with POST, PUT and PATCH, not with ${method}`);
  }
  const contentType = headers.get("content-type");
  if (typeof body === "string" && contentType !== null && !isJson(contentType)) return body;
  if (contentType === null) headers.set("content-type", "application/json");
  return JSON.stringify(body);
}

function isJson(contentType: string): boolean {
  return /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(contentType);
}

function propagatesTrace(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== "boolean")
    throw new HttpRequestConfigError("propagateTraceContext", "must be true or false");
  return value;
}

function wholeNumber(field: keyof RetryPolicy, value: unknown, minimum: number): number {
  if (value === undefined || value === null) return httpRequestDefaults[field];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < minimum) {
    throw new HttpRequestConfigError(field, `must be a whole number of at least ${minimum}`);
  }
  return value;
}

/**
 * The block's settings within D26's bounds. Save-time validation refuses settings beyond them; a workflow
 * stored before it must still not run unbounded, so they are clamped here too. The backoff's cap is kept at
 * least the lowest base, so a cap of 0 cannot undo the floor.
 */
function policyOf(config: HttpRequestConfig, bounds: Quotas["httpBlock"]): RetryPolicy {
  const clamp = (value: number, low: number, high: number) => Math.min(Math.max(value, low), high);
  return {
    retries: Math.min(wholeNumber("retries", config.retries, 0), bounds.maxRetries),
    retryBaseMs: Math.max(wholeNumber("retryBaseMs", config.retryBaseMs, 0), bounds.minRetryBaseMs),
    retryMaxMs: clamp(
      wholeNumber("retryMaxMs", config.retryMaxMs, 0),
      bounds.minRetryBaseMs,
      bounds.maxRetryMaxMs,
    ),
    timeoutMs: Math.min(wholeNumber("timeoutMs", config.timeoutMs, 1), bounds.maxTimeoutMs),
  };
}

function answered(reply: OutboundReply): AttemptOutcome {
  const { status } = reply;
  const retryable = isRetryableStatus(status);
  return {
    data: dataOf(new TextDecoder().decode(reply.body), reply.headers.get("content-type")),
    status,
    headers: headersObject(reply.headers),
    error: status >= 400 ? `request failed with status ${status} ${STATUS_CODES[status] ?? ""}`.trim() : null,
    retryable,
    retryAfterMs: retryable ? retryAfterMs(reply.headers.get("retry-after")) : undefined,
  };
}

/** The block has said "request timed out after" since D16; every other failure speaks for itself. */
function failed(failure: OutboundFailure, timeoutMs: number): AttemptOutcome {
  const error = failure.kind === "timeout" ? `request timed out after ${timeoutMs} ms` : failure.message;
  return { data: null, status: null, headers: {}, error, retryable: failure.retryable };
}

/**
 * D16: parsed JSON, else text. Many servers label JSON loosely (octet-stream, no type at all), so anything
 * not declared as text or markup is parsed when it parses; HTML and plain text stay text.
 */
function dataOf(text: string, contentType: string | null): unknown {
  const declaredText =
    contentType !== null && /^text\/|[/+](html|xml)\b/i.test(contentType) && !isJson(contentType);
  if (declaredText) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function headersObject(headers: Headers): Record<string, string> {
  const merged = new Map<string, string>();
  headers.forEach((value, name) => {
    const earlier = merged.get(name);
    merged.set(name, earlier === undefined ? value : `${earlier}, ${value}`);
  });
  return Object.fromEntries(merged);
}
