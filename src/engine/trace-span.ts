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

/** A span in the protobuf JSON of flowlog.logs.v1.TraceSpan; the seeder's spans come from here too. */
export function traceSpan(parts: SpanParts): SpanJson {
  return {
    id: parts.id,
    name: parts.name,
    type: parts.type,
    status: parts.error === undefined ? "success" : "error",
    startTime: isoFromMs(parts.start),
    endTime: isoFromMs(parts.end),
    durationMs: parts.end - parts.start,
    ...(parts.input === undefined ? {} : { input: parts.input as JsonValue }),
    ...(parts.output === undefined ? {} : { output: parts.output as JsonValue }),
    ...(parts.error === undefined ? {} : { error: parts.error }),
    ...(parts.agent ?? {}),
    children: parts.children ?? [],
  };
}
