import type { WorkflowState } from "../../../gen/flowlog/workflows/v1/workflow_pb.js";
import type { FieldViolation } from "../../errors/api-errors.js";
import type { Quotas } from "../../limits/quotas.js";
import { ownValue } from "../../util/own-property.js";
import { type Container, containersOf, settingOf } from "./graph-rules.js";

export type WorkflowQuotas = Pick<Quotas, "workflow" | "httpBlock">;

/**
 * What one execution of a saved workflow may consume (D26), checked on save so that a workflow that
 * could not run within the limits is refused with the field to change: its number of blocks, the block
 * runs it could make, and the HTTP block's retry and timeout settings. The engine enforces the block runs
 * again at run time (engine/run-budget.ts), where a collection's length is known.
 */
export function checkQuotas(state: WorkflowState, quotas: WorkflowQuotas): FieldViolation[] {
  return [
    ...blockCountProblems(state, quotas.workflow.maxBlocks),
    ...blockRunProblems(state, quotas.workflow.maxBlockRuns),
    ...httpBlockProblems(state, quotas.httpBlock),
  ];
}

function blockCountProblems(state: WorkflowState, max: number): FieldViolation[] {
  const count = Object.keys(state.blocks).length;
  if (count <= max) return [];
  return [{ field: "state.blocks", message: `a workflow has at most ${max} blocks; this one has ${count}` }];
}

/**
 * The most block runs an execution could make, as the engine counts them: one per enabled block run,
 * times the iterations or branches of every loop and parallel around it, at every depth. A collection's
 * length is unknown until run time, so it counts once here. A loop iteration that runs no block still
 * counts one, as in the engine, where it keeps an empty loop from spinning without bound.
 *
 * The violation names the innermost loop or parallel whose runs alone exceed the limit, or the whole
 * state when only their sum does.
 */
function blockRunProblems(state: WorkflowState, max: number): FieldViolation[] {
  const containers = new Map(containersOf(state));
  const runs = new Map<string, number>();
  const runsOf = (id: string, around: Set<string>): number => {
    const container = containers.get(id);
    if (!container) return ownValue(state.blocks, id)?.enabled === false ? 0 : 1;
    // Nesting that goes round in a circle is refused by graph-rules.ts; here it only must not recurse.
    if (around.has(id)) return 0;
    const inside = new Set(around).add(id);
    const perRun = container.nodes.reduce((sum, member) => sum + runsOf(member, inside), 0);
    const total = timesRun(container) * (container.kind === "loop" ? Math.max(perRun, 1) : perRun);
    runs.set(id, total);
    return total;
  };
  const nested = new Set([...containers.values()].flatMap((c) => c.nodes));
  const topLevel = [...Object.keys(state.blocks), ...containers.keys()].filter((id) => !nested.has(id));
  const total = topLevel.reduce((sum, id) => sum + runsOf(id, new Set()), 0);
  const limit = `more than the limit of ${max} block runs per execution`;
  const innermost = [...containers].filter(
    ([id, container]) =>
      (runs.get(id) ?? 0) > max && !container.nodes.some((member) => (runs.get(member) ?? 0) > max),
  );
  if (innermost.length > 0) {
    return innermost.map(([id, container]) => ({
      field: `${container.path}.${settingOf(container) ?? "nodes"}`,
      message: `${container.kind} ${id} can run ${runs.get(id)} blocks in one execution (${howOften(container)}), ${limit}`,
    }));
  }
  if (total <= max) return [];
  return [{ field: "state", message: `the workflow can run ${total} blocks in one execution, ${limit}` }];
}

/** How often a container runs its members: its stated amount, or once for a collection (unknown yet). */
function timesRun(container: Container): number {
  return isCollection(container) ? 1 : (container.amount ?? 0);
}

function howOften(container: Container): string {
  if (isCollection(container)) return "counting its collection as one item";
  return `${container.amount} ${container.kind === "loop" ? "iterations" : "branches"}`;
}

function isCollection(container: Container): boolean {
  return settingOf(container) === "collection";
}

/** D16's settings of the HTTP block, bounded so that one block cannot hold a worker for hours (D26). */
function httpBlockProblems(state: WorkflowState, bounds: Quotas["httpBlock"]): FieldViolation[] {
  const rules: [setting: string, bound: "at most" | "at least", limit: number][] = [
    ["retries", "at most", bounds.maxRetries],
    ["timeoutMs", "at most", bounds.maxTimeoutMs],
    ["retryBaseMs", "at least", bounds.minRetryBaseMs],
    ["retryMaxMs", "at most", bounds.maxRetryMaxMs],
  ];
  return Object.entries(state.blocks).flatMap(([id, block]) => {
    if (block.type !== "api") return [];
    const config: Record<string, unknown> = block.config ?? {};
    return rules.flatMap(([setting, bound, limit]) => {
      const value = config[setting];
      // A reference resolves at run time, where the block clamps its settings to the same bounds.
      if (typeof value !== "number") return [];
      if (bound === "at most" ? value <= limit : value >= limit) return [];
      return [
        {
          field: `state.blocks.${id}.config.${setting}`,
          message: `block ${id}: ${setting} must be ${bound} ${limit}, not ${value}`,
        },
      ];
    });
  });
}
