import type { JsonObject } from "@bufbuild/protobuf";
import { conditionConfigOf, selectConditionBranch } from "./condition.js";
import {
  type FoundReferences,
  findReferences,
  type ReferenceScope,
  resolveReferences,
} from "./references.js";

/**
 * The condition and response blocks (D13): without side effects, so they run inside the deterministic
 * workflow (the starter only hands on the trigger's input). They throw on a bad config or an unresolvable
 * reference; the engine turns that into a failed block (D14).
 */

export interface ConditionRun {
  output: { selectedPath: string | null };
  /** The branch id chosen, the sourceHandle of the edges to take; null when no branch held. */
  branch: string | null;
}

/** The response block's output: what a sync api or chat trigger answers with (D13). */
export interface ResponseOutput {
  data: unknown;
  status: number;
  headers: Record<string, string>;
}

export class BlockConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BlockConfigError";
  }
}

/**
 * Values of `{{NAME}}` exist only inside activities (D24): what runs in the workflow ends up in its
 * history, which the Temporal UI shows, and in outputs that reach logs. So these blocks refuse them.
 * `references` are those of the config (findReferences); the engine finds a block's once per graph.
 */
export function outputsOnly(
  references: FoundReferences,
  type: string,
  outputs: ReferenceScope["outputs"],
): ReferenceScope {
  const [name] = references.env;
  if (name !== undefined) {
    throw new BlockConfigError(
      `{{${name}}} cannot be used in a ${type} block: environment variables are secrets (D24), ` +
        "read only by blocks that call out (api, agent)",
    );
  }
  return { outputs, env: {} };
}

export function runCondition(
  config: JsonObject,
  outputs: ReferenceScope["outputs"],
  references = findReferences(config),
): ConditionRun {
  const scope = outputsOnly(references, "condition", outputs);
  const branch = selectConditionBranch(conditionConfigOf(config), scope) ?? null;
  return { output: { selectedPath: branch }, branch };
}

export function runResponse(
  config: JsonObject,
  outputs: ReferenceScope["outputs"],
  references = findReferences(config),
): { output: ResponseOutput } {
  const resolved = resolveReferences(config, outputsOnly(references, "response", outputs)) as JsonObject;
  return {
    output: {
      data: resolved.data ?? null,
      status: responseStatus(resolved.status),
      headers: responseHeaders(resolved.headers),
    },
  };
}

function responseStatus(status: unknown): number {
  if (status === undefined || status === null) return 200;
  const code = typeof status === "string" && /^\d+$/.test(status) ? Number(status) : status;
  if (typeof code !== "number" || !Number.isInteger(code) || code < 200 || code > 599) {
    throw new BlockConfigError("response block: status must be an HTTP status from 200 to 599");
  }
  return code;
}

function responseHeaders(headers: unknown): Record<string, string> {
  if (headers === undefined || headers === null) return {};
  if (typeof headers !== "object" || Array.isArray(headers)) {
    throw new BlockConfigError("response block: headers must be an object of header names to values");
  }
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      typeof value === "string" ? value : JSON.stringify(value),
    ]),
  );
}
