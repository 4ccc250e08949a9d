import type { Problem } from "../../errors/problem.js";

/** Where the CLI reaches flowlog's public API, and the key it shows (sent as x-api-key, never printed). */
export interface ApiConnection {
  url: string;
  apiKey: string;
}

/** An API refusal as its problem answer says it (RFC 9457): the CLI prints it and exits 1. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    /** From Retry-After (a 429's): how long the server asks the caller to wait. */
    readonly retryAfterMs?: number,
  ) {
    super(`${status} ${code}: ${detail}`);
  }

  /** The problem of a refused response; a body that is no problem (a proxy's page) says only its status. */
  static async of(response: Response): Promise<ApiProblem> {
    const text = await response.text();
    let problem: Partial<Problem> = {};
    try {
      problem = JSON.parse(text) as Partial<Problem>;
    } catch {}
    const retryAfter = Number(response.headers.get("retry-after") ?? Number.NaN);
    return new ApiProblem(
      response.status,
      problem.code ?? "unknown",
      problem.detail ?? (text.trim().slice(0, 200) || response.statusText),
      Number.isFinite(retryAfter) ? retryAfter * 1_000 : undefined,
    );
  }
}

/** The server could not be reached at all: a wrong --url, or a server that is down. */
export class Unreachable extends Error {
  constructor(url: string, error: unknown) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    super(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? String(error)}`);
  }
}

/** GET `path` of the API with the key; the JSON answer, or an ApiProblem for a refusal. */
export async function getJson<T>(
  connection: ApiConnection,
  path: string,
  query?: URLSearchParams,
): Promise<T> {
  const response = await request(connection, path, query, { accept: "application/json" });
  if (!response.ok) throw await ApiProblem.of(response);
  return (await response.json()) as T;
}

/** One GET with the key, for any answer (the tail reads it as a stream). */
export async function request(
  connection: ApiConnection,
  path: string,
  query: URLSearchParams | undefined,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<Response> {
  // Appended, not resolved: a --url with a path (behind a proxy) keeps it.
  const url = new URL(`${connection.url.replace(/\/+$/, "")}${path}`);
  if (query) url.search = query.toString();
  try {
    return await fetch(url, { headers: { ...headers, "x-api-key": connection.apiKey }, signal });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new Unreachable(connection.url, error);
  }
}
