import type { JsonValue } from "@bufbuild/protobuf";
import type { TokenCounts } from "../store/records.js";
import { isoFromMs } from "../util/time.js";
import type { SpanJson } from "./json-shapes.js";

/** One block run, or a loop or parallel with its runs as children (D17). Times are Unix milliseconds. */
export interface SpanParts {
  id: string;
  name: string;
  type: string;
  start: number;
  end: number;
  /** The config as resolved, `{{NAME}}` still as written (D24). */
  input: unknown;
  output: unknown;
  error?: string;
  /** Agent blocks only; cost in USD. */
  agent?: { model: string; tokens: TokenCounts; cost: number };
  children?: SpanJson[];
}

/**
 * A span in the protobuf JSON of flowlog.logs.v1.TraceSpan; the seeder's spans come from here too. The
 * optional fields are set in one order, so the stored JSON has one key order, and without spreading
 * conditional objects, which cost the seeder (issue 14, item 4) more than the rest of the span.
 */
export function traceSpan(parts: SpanParts): SpanJson {
  const { input, output, error, agent } = parts;
  const span: Omit<SpanJson, "children"> = {
    id: parts.id,
    name: parts.name,
    type: parts.type,
    status: error === undefined ? "success" : "error",
    startTime: isoFromMs(parts.start),
    endTime: isoFromMs(parts.end),
    durationMs: parts.end - parts.start,
  };
  if (input !== undefined) span.input = input as JsonValue;
  if (output !== undefined) span.output = output as JsonValue;
  if (error !== undefined) span.error = error;
  if (agent !== undefined) {
    span.model = agent.model;
    span.tokens = agent.tokens;
    span.cost = agent.cost;
  }
  return Object.assign(span, { children: parts.children ?? [] });
}
