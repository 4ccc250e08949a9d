import type { JsonValue } from "@bufbuild/protobuf";
import type { LoopJson, ParallelJson, SpanJson } from "./json-shapes.js";
import { outputsOnly } from "./local-blocks.js";
import type { OutputFrame } from "./output-frame.js";
import { findReferences, resolveReferences } from "./references.js";

/**
 * Loops and parallels (D13): their members run once per iteration, in order, or once per branch, all at
 * once. Inside them `<loop.index>` and `<loop.item>` (`<parallel.index>`, `<parallel.item>`) read the
 * current iteration (branch) and its collection item, null for a for loop or count parallel; the
 * innermost container wins. After a loop its members' outputs are those of the last iteration, after a
 * parallel those of the last branch. The container's own output is `{results}`: the last output of each
 * iteration or branch.
 */
export interface ContainerRun {
  /** What the container's span shows as its input. */
  input: unknown;
  results: unknown[];
  error?: string;
}

/** Runs one scope (a container's members) in a frame; resolves to the error that failed it. */
export type WalkScope = (container: string, frame: OutputFrame) => Promise<string | undefined>;

/**
 * Bounds on what a save can state (graph-rules.ts checks them): a for loop's iterations and a parallel's
 * branches, all started at once. A forEach loop's items are only known at run time; the execution's block
 * runs bound it instead (D26, run-budget.ts), so a long list stops at that limit rather than up front.
 */
export const maxIterations = 1_000;
export const maxBranches = 100;

export async function runLoop(
  id: string,
  loop: LoopJson,
  frame: OutputFrame,
  children: SpanJson[],
  walk: WalkScope,
): Promise<ContainerRun> {
  const items = loop.type === "forEach" ? collectionOf(id, loop.collection, frame) : undefined;
  const count = items ? items.length : countOf(id, loop.iterations, maxIterations);
  const input = { type: loop.type, iterations: count };
  const results: unknown[] = [];
  for (let index = 0; index < count; index++) {
    const iteration = frame.child(`-i${index}`, children, { loop: { index, item: items?.[index] ?? null } });
    const error = await walk(id, iteration);
    results.push(iteration.lastOutput);
    frame.absorb(iteration);
    if (error !== undefined) return { input, results, error };
  }
  return { input, results };
}

/** Branches record their spans apart and join them in branch order, so replays log the same tree. */
export async function runParallel(
  id: string,
  parallel: ParallelJson,
  frame: OutputFrame,
  children: SpanJson[],
  walk: WalkScope,
): Promise<ContainerRun> {
  const items = parallel.type === "collection" ? collectionOf(id, parallel.collection, frame) : undefined;
  const count = countOf(id, items?.length ?? parallel.count, maxBranches);
  const branches = Array.from({ length: count }, (_, index) =>
    frame.child(`-b${index}`, [], { parallel: { index, item: items?.[index] ?? null } }),
  );
  const errors = await Promise.all(branches.map((branch) => walk(id, branch)));
  for (const branch of branches) {
    children.push(...branch.spans);
    frame.absorb(branch);
  }
  const error = errors.find((e) => e !== undefined);
  const results = branches.map((branch) => branch.lastOutput);
  return {
    input: { type: parallel.type, branches: count },
    results,
    ...(error === undefined ? {} : { error }),
  };
}

/** A forEach loop's or collection parallel's items: a list, or a reference to one. */
function collectionOf(id: string, collection: JsonValue | undefined, frame: OutputFrame): unknown[] {
  const scope = outputsOnly(findReferences(collection), "loop or parallel", frame.outputs);
  const items = resolveReferences(collection, scope);
  if (!Array.isArray(items)) throw new Error(`${id}: the collection is not a list`);
  return items;
}

function countOf(id: string, count: number | undefined, max: number): number {
  if (count === undefined || !Number.isInteger(count) || count < 0 || count > max) {
    throw new Error(`${id}: needs a whole number of iterations or branches from 0 to ${max}, not ${count}`);
  }
  return count;
}
