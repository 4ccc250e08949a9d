/** An edge of the workflow graph with its position in `state.edges`, so a violation can name it. */
export interface IndexedEdge {
  index: number;
  source: string;
  target: string;
}

export interface Cycle {
  /** The edge that leads back to a node on the current path. */
  closingEdge: number;
  /** The nodes around the cycle, the first repeated at the end. */
  nodes: string[];
}

/**
 * Depth-first search in edge order: every edge back to a node on the current path closes a cycle.
 * Iterative, so a large graph cannot exhaust the stack.
 */
export function findCycles(edges: IndexedEdge[]): Cycle[] {
  const outgoing = new Map<string, IndexedEdge[]>();
  for (const edge of edges) {
    const list = outgoing.get(edge.source) ?? [];
    list.push(edge);
    outgoing.set(edge.source, list);
  }
  const visited = new Map<string, "on path" | "done">();
  const cycles: Cycle[] = [];
  for (const start of outgoing.keys()) {
    if (visited.has(start)) continue;
    const path = [{ node: start, next: 0 }];
    visited.set(start, "on path");
    for (let top = path.at(-1); top !== undefined; top = path.at(-1)) {
      const edge = outgoing.get(top.node)?.[top.next++];
      if (edge === undefined) {
        visited.set(top.node, "done");
        path.pop();
      } else if (visited.get(edge.target) === "on path") {
        const nodes = path.map((step) => step.node);
        cycles.push({
          closingEdge: edge.index,
          nodes: [...nodes.slice(nodes.indexOf(edge.target)), edge.target],
        });
      } else if (!visited.has(edge.target)) {
        visited.set(edge.target, "on path");
        path.push({ node: edge.target, next: 0 });
      }
    }
  }
  return cycles;
}
