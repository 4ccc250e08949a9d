import type { JsonValue } from "@bufbuild/protobuf";
import { ownValue } from "../util/own-property.js";
import type { ReusedOutputs } from "./execution-types.js";
import type { SpanJson, WorkflowStateJson } from "./json-shapes.js";

/**
 * What an execution's entry records of its run (D17's trace spans), read back for a retry (D47). Pure: the
 * API reads it before a retry starts.
 */

/** The trigger's payload, as its starter span recorded it; undefined when no starter ran. */
export function starterInput(traceSpans: readonly unknown[]): { value: JsonValue } | undefined {
  const starter = (traceSpans as SpanJson[]).find((span) => span.type === "starter");
  return starter && { value: starter.output ?? null };
}

/** What a resumed retry takes from the run it retries (D47). */
export interface ReusableRun {
  /** The recorded runs of the HTTP and agent blocks that succeeded before their scope's first failure. */
  outputs: ReusedOutputs;
  /** The ids of the blocks reused and of the loops and parallels around them: what must not have changed. */
  nodes: Set<string>;
}

/** The blocks whose runs a retry reuses: those with side effects; the others are pure and run again. */
const reusedTypes = new Set(["api", "agent"]);

/**
 * D47: the block runs a retry from the failed block reuses. A scope's run (the top level, each loop
 * iteration, each parallel branch) records its spans in the order its nodes ran, so what succeeded before
 * the scope's first failed node is what ran before the failure; a failed loop or parallel is looked into
 * the same way, iteration by iteration and branch by branch, and ends its own scope's reuse.
 */
export function reusableRun(traceSpans: readonly unknown[]): ReusableRun {
  const run: ReusableRun = { outputs: {}, nodes: new Set() };
  collect(traceSpans as SpanJson[], 0, run);
  return run;
}

/** Span ids carry one `-i<n>` or `-b<n>` per enclosing loop or parallel (run-graph.ts): `depth` of them. */
function collect(spans: SpanJson[], depth: number, into: ReusableRun): void {
  for (const span of spans) {
    if (span.type === "loop" || span.type === "parallel") {
      const before = Object.keys(into.outputs).length;
      for (const scope of scopeRuns(span.children)) collect(scope, depth + 1, into);
      if (Object.keys(into.outputs).length > before) into.nodes.add(nodeIdOf(span.id, depth));
    } else if (span.status === "success" && reusedTypes.has(span.type)) {
      into.outputs[span.id] = { input: span.input ?? null, output: span.output ?? null };
      into.nodes.add(nodeIdOf(span.id, depth));
    }
    if (span.status === "error") return;
  }
}

/** A container's children, one list per iteration or branch (the last suffix of their ids), in order. */
function scopeRuns(children: SpanJson[]): SpanJson[][] {
  const runs = new Map<string, SpanJson[]>();
  for (const child of children) {
    const scope = /-[ib]\d+$/.exec(child.id)?.[0] ?? "";
    runs.set(scope, [...(runs.get(scope) ?? []), child]);
  }
  return [...runs.values()];
}

function nodeIdOf(spanId: string, depth: number): string {
  let id = spanId;
  for (let level = 0; level < depth; level++) id = id.replace(/-[ib]\d+$/, "");
  return id;
}

/**
 * D47: the reused nodes whose definition differs between the version the execution ran and the one a
 * retry runs, or is gone from it: their recorded runs say nothing of what the new version would do.
 */
export function changedNodes(
  nodes: Iterable<string>,
  ran: WorkflowStateJson,
  runs: WorkflowStateJson,
): string[] {
  const definition = (state: WorkflowStateJson, id: string) =>
    JSON.stringify(ownValue(state.blocks, id) ?? ownValue(state.loops, id) ?? ownValue(state.parallels, id));
  return [...nodes].filter((id) => definition(ran, id) !== definition(runs, id));
}
