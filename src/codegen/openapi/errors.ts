import { STATUS_CODES } from "node:http";
import { Code } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { type JsonSchema, sortKeys } from "./json-schema.js";

/** Who may call an operation decides which errors and headers it can answer with. */
export type Caller = "user" | "operator";

const PROBLEM_REF = { $ref: "#/components/schemas/Problem" };

/** D10: the statuses of the REST paths and what each means there. */
const PROBLEMS: Record<number, { description: string; callers: readonly Caller[]; withBodyOnly?: true }> = {
  400: {
    description: "A missing or invalid parameter; errors names each bad field.",
    callers: ["user", "operator"],
  },
  401: { description: "No credential, or an unknown or revoked one.", callers: ["user", "operator"] },
  403: { description: "The key's user cannot access this workspace.", callers: ["user"] },
  404: {
    description: "Not found, or not visible to the key: existence is never leaked.",
    callers: ["user", "operator"],
  },
  413: {
    description: "The request body is over the limit (1 MiB by default, counted after decompression).",
    callers: ["user", "operator"],
    withBodyOnly: true,
  },
  429: {
    description:
      "The API rate limit is exhausted, or the client address failed authentication too often; Retry-After says when to retry.",
    callers: ["user", "operator"],
  },
  500: { description: "An unexpected error; the body holds no internals.", callers: ["user", "operator"] },
  501: {
    description: "The RPC is declared but has no handler in this build.",
    callers: ["user", "operator"],
  },
};

/** D11: the API rate limit travels in headers on every response after authentication. */
const RATE_LIMIT_HEADERS: Record<string, JsonSchema> = {
  "X-RateLimit-Limit": {
    description: "Requests per minute of the caller's plan (the refill rate).",
    schema: { type: "integer" },
  },
  "X-RateLimit-Remaining": {
    description: "Whole tokens left in the caller's bucket.",
    schema: { type: "integer" },
  },
  "X-RateLimit-Reset": {
    description: "When the next whole token is added.",
    schema: { type: "string", format: "date-time" },
  },
};

const RETRY_AFTER_HEADER: Record<string, JsonSchema> = {
  "Retry-After": { description: "Seconds to wait before retrying, rounded up.", schema: { type: "integer" } },
};

export function headerComponents(): Record<string, JsonSchema> {
  return { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER_HEADER };
}

/**
 * Operator calls are not counted against a user's bucket, and a 401 comes before the bucket is known (D28);
 * a 429 of either may be the throttle on failed authentications, which says only when to retry.
 */
export function responseHeaders(caller: Caller, status: number): JsonSchema | undefined {
  const names = [
    ...(caller === "operator" || status === 401 ? [] : Object.keys(RATE_LIMIT_HEADERS)),
    ...(status === 429 ? Object.keys(RETRY_AFTER_HEADER) : []),
  ];
  if (names.length === 0) return undefined;
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

/** References to the shared error responses, keyed by status; 413 only where the request has a body. */
export function problemResponseRefs(caller: Caller, hasBody: boolean): Record<string, JsonSchema> {
  const statuses = [
    ...problemsOf(caller)
      .filter(([status]) => hasBody || !PROBLEMS[Number(status)]?.withBodyOnly)
      .map(([status]) => status),
    "default",
  ];
  return Object.fromEntries(
    statuses.map((status) => [status, { $ref: `#/components/responses/${responseName(caller, status)}` }]),
  );
}

/** The error responses every operation of `callers` refers to. */
export function responseComponents(callers: ReadonlySet<Caller>): Record<string, JsonSchema> {
  const entries: [string, JsonSchema][] = [["OtherError", problemResponse(OTHER_ERROR, undefined)]];
  for (const caller of callers) {
    for (const [status, description] of problemsOf(caller)) {
      const headers = responseHeaders(caller, Number(status));
      entries.push([responseName(caller, status), problemResponse(description, headers)]);
    }
  }
  return sortKeys(Object.fromEntries(entries));
}

const OTHER_ERROR =
  "Any other error in the same form, such as 409 already_exists, or 504 deadline_exceeded when a sync execution " +
  "outlasts its deadline (its executionId is in the body and the Flowlog-Execution-Id header).";

/** `[status, description]` of each error `caller` can get. */
function problemsOf(caller: Caller): [string, string][] {
  return Object.entries(PROBLEMS)
    .filter(([, problem]) => problem.callers.includes(caller))
    .map(([status, problem]) => [status, problem.description]);
}

/** `NotFound` for users, `OperatorNotFound` for the admin paths, whose responses carry no rate limit. */
function responseName(caller: Caller, status: string): string {
  if (status === "default") return "OtherError";
  const reason = (STATUS_CODES[Number(status)] ?? status).replace(/[^A-Za-z]/g, "");
  return caller === "operator" ? `Operator${reason}` : reason;
}

function problemResponse(description: string, headers: JsonSchema | undefined): JsonSchema {
  return { description, headers, content: { "application/problem+json": { schema: PROBLEM_REF } } };
}

/** The RFC 9457 body of every REST error (D10); code is the Connect code that gRPC clients get too. */
export function problemSchema(): JsonSchema {
  return {
    description: "RFC 9457 problem details.",
    type: "object",
    required: ["type", "title", "status", "detail", "code"],
    properties: {
      type: { const: "about:blank" },
      title: { type: "string", description: "The HTTP status text." },
      status: { type: "integer", description: "The HTTP status code." },
      detail: { type: "string", description: "What went wrong, for a human." },
      code: { type: "string", enum: connectCodes() },
      executionId: {
        type: "string",
        description:
          "On a 504 of a sync execution (deadline_exceeded) only: the execution that goes on and will be logged.",
      },
      errors: {
        description: "Invalid input only: one entry per bad field.",
        type: "array",
        items: {
          type: "object",
          required: ["field", "message"],
          properties: { field: { type: "string" }, message: { type: "string" } },
        },
      },
    },
  };
}

/** Spelled as the gateway writes them (src/errors/problem.ts). */
function connectCodes(): string[] {
  return Object.values(Code)
    .filter((code): code is Code => typeof code === "number")
    .map(codeToString);
}
