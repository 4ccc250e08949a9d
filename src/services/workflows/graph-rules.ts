import type { Value } from "@bufbuild/protobuf/wkt";
import type { Loop, Parallel, WorkflowState } from "../../../gen/flowlog/workflows/v1/workflow_pb.js";
import { type ConditionConfig, checkConditionConfig } from "../../engine/condition.js";
import { maxBranches, maxIterations } from "../../engine/containers.js";
import { errorHandle } from "../../engine/workflow-graph.js";
import type { FieldViolation } from "../../errors/api-errors.js";
import { ownValue } from "../../util/own-property.js";
import { findCycles, type IndexedEdge } from "./cycles.js";

/**
 * The shape rules of the graph as engine/workflow-graph.ts walks it: blocks, loops and parallels are
 * nodes that edges join; each node belongs to exactly one scope (the top level, or the loop or parallel
 * listing it); edges join nodes of one scope and never form a cycle, since a loop is how blocks repeat.
 */
export function checkGraph(state: WorkflowState): FieldViolation[] {
  const graph = describeNodes(state);
  return [...checkContainers(state, graph), ...checkEdges(state, graph)];
}

export interface Container {
  kind: "loop" | "parallel";
  path: string;
  type: string;
  nodes: string[];
  /** A for loop's iterations, a count parallel's copies. */
  amount: number | undefined;
  collection: Value | undefined;
}

export function containersOf(state: WorkflowState): [string, Container][] {
  const loops = Object.entries(state.loops).map(([id, loop]): [string, Container] => [
    id,
    { kind: "loop", path: `state.loops.${id}`, amount: loop.iterations, ...pick(loop) },
  ]);
  const parallels = Object.entries(state.parallels).map(([id, parallel]): [string, Container] => [
    id,
    { kind: "parallel", path: `state.parallels.${id}`, amount: parallel.count, ...pick(parallel) },
  ]);
  return [...loops, ...parallels];
}

function pick(container: Loop | Parallel): Pick<Container, "type" | "nodes" | "collection"> {
  return { type: container.type, nodes: container.nodes, collection: container.collection };
}

/** Per kind: each type, and the setting it needs (proto comments of Loop and Parallel). */
const settings = {
  loop: { for: "iterations", forEach: "collection" },
  parallel: { count: "count", collection: "collection" },
} as const;

/** How often a container runs is set by iterations, count or collection; undefined for an unknown type. */
export function settingOf(container: Container): string | undefined {
  const types: Record<string, string> = settings[container.kind];
  return Object.hasOwn(types, container.type) ? types[container.type] : undefined;
}

/** The engine's bounds on Temporal history (engine/containers.ts). */
const maxAmount = { iterations: maxIterations, count: maxBranches };

interface GraphNode {
  kind: string;
  path: string;
  /** The loop or parallel listing the node; undefined at the top level. */
  parent?: string;
}

function describeNodes(state: WorkflowState): Map<string, GraphNode> {
  const nodes = new Map<string, GraphNode>();
  for (const id of Object.keys(state.blocks)) nodes.set(id, { kind: "block", path: `state.blocks.${id}` });
  const containers = containersOf(state);
  for (const [id, { kind, path }] of containers) if (!nodes.has(id)) nodes.set(id, { kind, path });
  for (const [id, container] of containers) {
    for (const member of container.nodes) {
      const node = nodes.get(member);
      if (node && node.parent === undefined && member !== id) node.parent = id;
    }
  }
  return nodes;
}

function checkContainers(state: WorkflowState, graph: Map<string, GraphNode>): FieldViolation[] {
  return containersOf(state).flatMap(([id, container]) => {
    const violations = settingProblems(id, container);
    if (graph.get(id)?.path !== container.path) {
      violations.push({ field: container.path, message: `${id} is already the id of another node` });
    }
    if (container.nodes.length === 0) {
      violations.push({
        field: `${container.path}.nodes`,
        message: `${container.kind} ${id} has no members`,
      });
    }
    container.nodes.forEach((member, i) => {
      const problem = memberProblem(state, graph, id, member);
      if (problem) {
        violations.push({
          field: `${container.path}.nodes[${i}]`,
          message: `${container.kind} ${id} ${problem}`,
        });
      }
    });
    return violations;
  });
}

function settingProblems(id: string, container: Container): FieldViolation[] {
  const setting = settingOf(container);
  const name = `${container.kind} ${id}`;
  if (setting === undefined) {
    const known = Object.keys(settings[container.kind]).join(" or ");
    return [
      { field: `${container.path}.type`, message: `${name} has type "${container.type}"; use ${known}` },
    ];
  }
  const needs = (what: string) => [
    { field: `${container.path}.${setting}`, message: `${name} (${container.type}) needs ${what}` },
  ];
  if (setting === "collection") return container.collection === undefined ? needs("a collection") : [];
  const max = maxAmount[setting as keyof typeof maxAmount];
  return container.amount !== undefined && container.amount <= max
    ? []
    : needs(`${setting} from 0 to ${max}`);
}

function memberProblem(
  state: WorkflowState,
  graph: Map<string, GraphNode>,
  container: string,
  member: string,
): string | undefined {
  const node = graph.get(member);
  if (!node) return `lists ${member}, which is no block, loop or parallel`;
  if (member === container) return "cannot contain itself";
  if (node.parent !== container) return `lists ${member}, which is already inside ${node.parent}`;
  if (ownValue(state.blocks, member)?.type === "starter")
    return "cannot contain the starter block: it runs first";
  if (isInside(graph, container, member)) return `lists ${member}, which contains ${container} in turn`;
  return undefined;
}

/** Whether `inner` sits inside `outer` at any depth; the walk stops where nesting goes round in a circle. */
function isInside(graph: Map<string, GraphNode>, inner: string, outer: string): boolean {
  const seen = new Set<string>();
  for (let at = graph.get(inner)?.parent; at !== undefined && !seen.has(at); at = graph.get(at)?.parent) {
    if (at === outer) return true;
    seen.add(at);
  }
  return false;
}

function checkEdges(state: WorkflowState, graph: Map<string, GraphNode>): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const joined: IndexedEdge[] = [];
  state.edges.forEach((edge, index) => {
    const path = `state.edges[${index}]`;
    const problem = (field: string, message: string) =>
      violations.push({ field, message: `edge ${index}: ${message}` });
    const missing = (["source", "target"] as const).filter((end) => !graph.has(edge[end]));
    for (const end of missing) problem(`${path}.${end}`, `${end} ${edge[end]} is no block, loop or parallel`);
    if (missing.length > 0) return;
    const handle = handleProblem(state, edge.source, edge.sourceHandle);
    if (handle) problem(`${path}.sourceHandle`, handle);
    const [from, to] = [scopeOf(graph, edge.source), scopeOf(graph, edge.target)];
    if (from === to) joined.push({ index, source: edge.source, target: edge.target });
    else
      problem(
        path,
        `joins ${edge.source} (${from}) and ${edge.target} (${to}); edges join nodes of one scope, so connect to the loop or parallel itself`,
      );
  });
  for (const cycle of findCycles(joined)) {
    violations.push({
      field: `state.edges[${cycle.closingEdge}]`,
      message: `edge ${cycle.closingEdge} closes a cycle (${cycle.nodes.join(" -> ")}); repeat blocks with a loop`,
    });
  }
  return violations;
}

function scopeOf(graph: Map<string, GraphNode>, id: string): string {
  const parent = graph.get(id)?.parent;
  return parent === undefined ? "top level" : `inside ${graph.get(parent)?.kind} ${parent}`;
}

/** A condition's edges leave by one of its branch ids, or by the error path. */
function handleProblem(state: WorkflowState, source: string, handle: string | undefined): string | undefined {
  const block = ownValue(state.blocks, source);
  if (block?.type !== "condition" || handle === undefined || handle === errorHandle) return undefined;
  // A config that is not a ConditionConfig is reported on the block itself.
  if (checkConditionConfig(block.config).length > 0) return undefined;
  const branches = (block.config as unknown as ConditionConfig).conditions.map((branch) => branch.id);
  if (branches.includes(handle)) return undefined;
  return `condition ${source} has no branch "${handle}"; its handles are ${[...branches, errorHandle].join(", ")}`;
}
