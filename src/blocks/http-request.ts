import { STATUS_CODES } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import { type Dispatcher, fetch, Headers, type Response } from "undici";
import { createOutboundDispatcher, outboundRefusalOf } from "../security/outbound.js";
import { innermostMessage, retryAfterMs, retryDelay } from "./retry.js";

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
}

export interface HttpRequestOptions {
  allowPrivateNetworks: boolean;
  /** Cancels the request and any wait between attempts; the run then rejects with the signal's reason. */
  signal?: AbortSignal;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  onAttempt?: (attempt: AttemptInfo) => void;
}

/** One attempt, for trace spans (D17). Times are Unix milliseconds. */
export interface AttemptInfo {
  attempt: number;
  startedAt: number;
  endedAt: number;
  durationMs: number;
  status: number | null;
  error: string | null;
  /** Wait before the next attempt, or null when this attempt was the last. */
  retryInMs: number | null;
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
  attempts: number;
  timings: AttemptInfo[];
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
const maxResponseBytes = 10 * 1024 * 1024;
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
  const request = prepareRequest(config);
  const policy = policyOf(config);
  const random = options.random ?? Math.random;
  const timings: AttemptInfo[] = [];
  for (;;) {
    options.signal?.throwIfAborted();
    const startedAt = Date.now();
    const { retryable, retryAfterMs, ...outputs } = await attempt(request, policy.timeoutMs, options);
    const endedAt = Date.now();
    const retryInMs =
      retryable && timings.length < policy.retries
        ? retryDelay(
            timings.length,
            retryAfterMs,
            { baseMs: policy.retryBaseMs, maxMs: policy.retryMaxMs },
            random,
          )
        : null;
    const timing: AttemptInfo = {
      attempt: timings.length + 1,
      startedAt,
      endedAt,
      durationMs: endedAt - startedAt,
      status: outputs.status,
      error: outputs.error,
      retryInMs,
    };
    timings.push(timing);
    options.onAttempt?.(timing);
    if (retryInMs === null) return { ...outputs, attempts: timings.length, timings };
    await pause(retryInMs, options);
  }
}

interface PreparedRequest {
  method: HttpMethod;
  url: URL;
  headers: Headers;
  body: string | undefined;
}

interface AttemptOutcome extends Pick<HttpRequestResult, "data" | "status" | "headers" | "error"> {
  retryable: boolean;
  retryAfterMs?: number;
}

type RetryPolicy = typeof httpRequestDefaults;

function prepareRequest(config: HttpRequestConfig): PreparedRequest {
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
  const url = URL.canParse(filled) ? new URL(filled) : undefined;
  const problem = url ? targetProblem(url) : "must be an absolute http or https URL";
  if (!url || problem) throw new HttpRequestConfigError("url", problem ?? "");
  appendQuery(url, config.query);
  return url;
}

function targetProblem(url: URL): string | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must use http or https";
  if (url.username || url.password) return "must not carry credentials (send them in a header)";
  return undefined;
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
  if (pairs === undefined || pairs === null) return [];
  const entries: Array<[unknown, unknown]> = Array.isArray(pairs)
    ? pairs.map((pair: { key?: unknown; value?: unknown }) => [pair?.key, pair?.value])
    : Object.entries(pairs);
  return entries.flatMap(([key, value]): Array<[string, string]> => {
    if (key === "" && (value === "" || value === undefined)) return [];
    if (typeof key !== "string" || key === "")
      throw new HttpRequestConfigError(field, "has a pair without a key");
    return [[key, textOf(field, value)]];
  });
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

function wholeNumber(field: keyof RetryPolicy, value: unknown, minimum: number): number {
  if (value === undefined || value === null) return httpRequestDefaults[field];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < minimum) {
    throw new HttpRequestConfigError(field, `must be a whole number of at least ${minimum}`);
  }
  return value;
}

function policyOf(config: HttpRequestConfig): RetryPolicy {
  return {
    retries: wholeNumber("retries", config.retries, 0),
    retryBaseMs: wholeNumber("retryBaseMs", config.retryBaseMs, 0),
    retryMaxMs: wholeNumber("retryMaxMs", config.retryMaxMs, 0),
    timeoutMs: wholeNumber("timeoutMs", config.timeoutMs, 1),
  };
}

/** An injected sleep cannot see the signal, so cancellation is checked again once the wait ends. */
async function pause(ms: number, options: HttpRequestOptions): Promise<void> {
  const sleep = options.sleep ?? ((wait: number) => delay(wait, undefined, { signal: options.signal }));
  await sleep(ms).catch((error: unknown) => {
    options.signal?.throwIfAborted();
    throw error;
  });
  options.signal?.throwIfAborted();
}

/** A failure no retry can change: a refused address is refused again, a large body is large again. */
class PermanentFailure extends Error {}

async function attempt(
  request: PreparedRequest,
  timeoutMs: number,
  options: HttpRequestOptions,
): Promise<AttemptOutcome> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const response = await fetchFollowingRedirects(request, signal, createOutboundDispatcher(options));
    return await outcomeOf(response);
  } catch (error) {
    options.signal?.throwIfAborted();
    if (timeout.aborted) return failure(`request timed out after ${timeoutMs} ms`, true);
    if (error instanceof PermanentFailure) return failure(error.message, false);
    const refusal = outboundRefusalOf(error);
    if (refusal) return failure(refusal.message, false);
    return failure(`connection failed: ${innermostMessage(error)}`, true);
  }
}

function failure(error: string, retryable: boolean): AttemptOutcome {
  return { data: null, status: null, headers: {}, error, retryable };
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
const credentialHeaders = ["authorization", "cookie", "proxy-authorization"];
const bodyHeaders = [
  "content-type",
  "content-length",
  "content-encoding",
  "content-language",
  "content-location",
];

/**
 * Redirects are followed here rather than by fetch so the chain stops at `maxRedirects`, and every hop
 * goes through the same guarded dispatcher, which judges each hop's address again (D22).
 */
async function fetchFollowingRedirects(
  request: PreparedRequest,
  signal: AbortSignal,
  dispatcher: Dispatcher,
): Promise<Response> {
  let hop = request;
  for (let redirects = 0; ; redirects++) {
    const { method, url, headers, body } = hop;
    const response = await fetch(url, { method, headers, body, redirect: "manual", signal, dispatcher });
    const location = redirectStatuses.has(response.status) ? response.headers.get("location") : null;
    if (location === null) return response;
    await response.body?.cancel();
    if (redirects === maxRedirects) throw new PermanentFailure(`stopped after ${maxRedirects} redirects`);
    hop = redirected(hop, response.status, location);
  }
}

/** The fetch standard's rules: credentials stay with their origin, 303 (and 301/302 after POST) become GET. */
function redirected(previous: PreparedRequest, status: number, location: string): PreparedRequest {
  const url = URL.canParse(location, previous.url.href) ? new URL(location, previous.url) : undefined;
  const problem = url ? targetProblem(url) : "must be a valid URL";
  if (!url || problem) throw new PermanentFailure(`redirect target ${problem}`);
  const headers = new Headers(previous.headers);
  if (url.origin !== previous.url.origin) for (const name of credentialHeaders) headers.delete(name);
  const becomesGet =
    (status === 303 && previous.method !== "GET") ||
    ((status === 301 || status === 302) && previous.method === "POST");
  if (!becomesGet) return { ...previous, url, headers };
  for (const name of bodyHeaders) headers.delete(name);
  return { method: "GET", url, headers, body: undefined };
}

async function outcomeOf(response: Response): Promise<AttemptOutcome> {
  const { status } = response;
  const retryable = status === 429 || status >= 500;
  const text = await cappedText(response);
  return {
    data: dataOf(text, response.headers.get("content-type")),
    status,
    headers: headersObject(response.headers),
    error: status >= 400 ? `request failed with status ${status} ${STATUS_CODES[status] ?? ""}`.trim() : null,
    retryable,
    retryAfterMs: retryable ? retryAfterMs(response.headers.get("retry-after")) : undefined,
  };
}

/** Counted as it streams, so an endless or huge body is cut off at the limit rather than buffered (D16). */
async function cappedText(response: Response): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > maxResponseBytes) throw new PermanentFailure("response body exceeds the 10 MB limit");
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
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
