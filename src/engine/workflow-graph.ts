import { ownValue } from "../util/own-property.js";
import type { EdgeJson, WorkflowStateJson } from "./json-shapes.js";
import { type FoundReferences, findReferences } from "./references.js";

/**
 * The shape of a workflow as the engine walks it (D13). Loops and parallels are nodes of the graph under
 * their own ids: edges lead into and out of them, and their member blocks (`nodes`) form an inner graph
 * of their own, run once per iteration or branch. So every node belongs to exactly one scope: the top
 * level, or the container listing it. Edges count only between nodes of the same scope.
 */
export interface Scope {
  /** Nodes in the order they run: each after every node with an edge into it (a DAG, D13). */
  order: string[];
  /** Where a walk of the scope starts: the starter at the top level, members without inner predecessors. */
  entries: string[];
  edgesFrom(node: string): EdgeJson[];
}

/** The edge handle a failed block takes instead of failing the execution (issue 4, item 2). */
export const errorHandle = "error";

export class WorkflowGraphError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorkflowGraphError";
  }
}

/**
 * Built from the state alone and read-only after, so one graph can serve any number of runs of the same
 * workflow (the seeder runs each demo workflow thousands of times): what it works out, it works out once.
 */
export class WorkflowGraph {
  private readonly scopes = new Map<string, Scope>();
  private readonly references = new Map<string, FoundReferences>();

  constructor(readonly state: WorkflowStateJson) {}

  /** What a block's config references (D14): the outputs an activity is handed, the variables refused. */
  referencesOf(block: string): FoundReferences {
    let found = this.references.get(block);
    if (!found) {
      found = findReferences(ownValue(this.state.blocks, block)?.config ?? {});
      this.references.set(block, found);
    }
    return found;
  }

  /** The scope of a container's members, or the top level for undefined. Throws WorkflowGraphError. */
  scope(container?: string): Scope {
    const key = container ?? "";
    let scope = this.scopes.get(key);
    if (!scope) {
      scope = this.buildScope(container);
      this.scopes.set(key, scope);
    }
    return scope;
  }

  private buildScope(container: string | undefined): Scope {
    const nodes = container === undefined ? this.topLevelNodes() : this.membersOf(container);
    const inScope = new Set(nodes);
    const edges = this.state.edges.filter((e) => inScope.has(e.source) && inScope.has(e.target));
    const order = topologicalOrder(nodes, edges);
    const entries =
      container === undefined
        ? nodes.filter((id) => ownValue(this.state.blocks, id)?.type === "starter")
        : nodes.filter((id) => !edges.some((e) => e.target === id));
    if (entries.length === 0) {
      throw new WorkflowGraphError(
        container === undefined ? "the workflow has no starter block" : `${container} has no first member`,
      );
    }
    const outgoing = new Map<string, EdgeJson[]>();
    for (const e of edges) outgoing.set(e.source, [...(outgoing.get(e.source) ?? []), e]);
    return { order, entries, edgesFrom: (node) => outgoing.get(node) ?? [] };
  }

  private membersOf(container: string): string[] {
    const { loops, parallels } = this.state;
    const members = ownValue(loops, container)?.nodes ?? ownValue(parallels, container)?.nodes;
    if (!members) throw new WorkflowGraphError(`${container} is neither a loop nor a parallel`);
    return members;
  }

  private topLevelNodes(): string[] {
    const containers = [...Object.values(this.state.loops), ...Object.values(this.state.parallels)];
    const members = new Set(containers.flatMap((c) => c.nodes));
    const all = [
      ...Object.keys(this.state.blocks),
      ...Object.keys(this.state.loops),
      ...Object.keys(this.state.parallels),
    ];
    return all.filter((id) => !members.has(id));
  }
}

/** Kahn's algorithm, ties broken by declaration order so every replay walks the same order. */
function topologicalOrder(nodes: string[], edges: EdgeJson[]): string[] {
  const incoming = new Map(nodes.map((id) => [id, 0]));
  for (const e of edges) incoming.set(e.target, (incoming.get(e.target) ?? 0) + 1);
  const ready = nodes.filter((id) => incoming.get(id) === 0);
  const order: string[] = [];
  for (let node = ready.shift(); node !== undefined; node = ready.shift()) {
    order.push(node);
    for (const e of edges) {
      if (e.source !== node) continue;
      const left = (incoming.get(e.target) ?? 0) - 1;
      incoming.set(e.target, left);
      if (left === 0) ready.push(e.target);
    }
  }
  const cyclic = nodes.filter((id) => !order.includes(id));
  if (cyclic.length > 0) {
    throw new WorkflowGraphError(
      `the edges between ${cyclic.join(", ")} form a cycle; repeat blocks with a loop`,
    );
  }
  return order;
}
