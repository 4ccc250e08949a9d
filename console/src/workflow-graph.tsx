import { graphlib, layout } from "@dagrejs/dagre";
import { useId } from "preact/hooks";
import type { WorkflowState } from "../../gen/flowlog/workflows/v1/workflow_pb.js";

/** What the trace says of one block, loop or parallel: how often it ran and failed, when first. */
export interface NodeRuns {
  runs: number;
  failed: number;
  firstStart: number;
}

interface Point {
  x: number;
  y: number;
}

/** A drawn node, its top-left corner in the drawing's coordinates. */
interface Box extends Point {
  id: string;
  kind: "block" | "loop" | "parallel";
  name: string;
  type: string;
  width: number;
  height: number;
}

interface Line {
  source: string;
  target: string;
  handle?: string;
  points: Point[];
  labelAt?: Point;
}

interface Drawing {
  width: number;
  height: number;
  /** Loops and parallels before what they hold, so a frame is drawn beneath its members. */
  boxes: Box[];
  lines: Line[];
}

const block = { width: 168, height: 52 };
const frame = { pad: 16, header: 26, minWidth: 140 };
const handleLabel = { width: 44, height: 16 };

/**
 * Lays out one scope of the workflow (D13): the top level, or a loop's or parallel's members, each scope
 * with its own edges only (workflow-graph.ts of the engine). A loop or parallel is one node of its scope,
 * sized to hold the drawing of its members, which is laid out first and moved into it.
 */
function layoutScope(state: WorkflowState, members: string[], seen: Set<string>): Drawing {
  const inScope = new Set(members.filter((id) => !seen.has(id)));
  if (inScope.size === 0) return { width: 0, height: 0, boxes: [], lines: [] };
  for (const id of inScope) seen.add(id);
  const graph = new graphlib.Graph({ multigraph: true });
  graph.setGraph({ rankdir: "LR", nodesep: 28, ranksep: 56, marginx: 0, marginy: 0 });
  const inner = new Map<string, Drawing>();
  for (const id of inScope) {
    const container = state.loops[id] ?? state.parallels[id];
    if (container) {
      const drawing = layoutScope(state, container.nodes, seen);
      inner.set(id, drawing);
      graph.setNode(id, {
        width: Math.max(frame.minWidth, drawing.width + 2 * frame.pad),
        height: drawing.height + frame.header + frame.pad,
      });
    } else graph.setNode(id, { ...block });
  }
  state.edges.forEach((edge, index) => {
    if (!inScope.has(edge.source) || !inScope.has(edge.target)) return;
    const label = edge.sourceHandle === undefined ? {} : { ...handleLabel, labelpos: "c" as const };
    graph.setEdge(edge.source, edge.target, label, `e${index}`);
  });
  layout(graph);

  const boxes: Box[] = [];
  const lines: Line[] = [];
  for (const id of inScope) {
    const node = graph.node(id);
    const x = (node.x ?? 0) - node.width / 2;
    const y = (node.y ?? 0) - node.height / 2;
    boxes.push({ id, x, y, width: node.width, height: node.height, ...describe(state, id) });
    const drawing = inner.get(id);
    if (drawing) {
      const moved = shift(drawing, x + (node.width - drawing.width) / 2, y + frame.header);
      boxes.push(...moved.boxes);
      lines.push(...moved.lines);
    }
  }
  for (const ref of graph.edges()) {
    const label = graph.edge(ref);
    const edge = state.edges[Number(ref.name?.slice(1))];
    if (!edge) continue;
    const labelAt = edge.sourceHandle === undefined ? undefined : { x: label.x ?? 0, y: label.y ?? 0 };
    lines.push({
      source: edge.source,
      target: edge.target,
      handle: edge.sourceHandle,
      points: label.points ?? [],
      labelAt,
    });
  }
  const size = graph.graph();
  return { width: size.width ?? 0, height: size.height ?? 0, boxes, lines };
}

function describe(state: WorkflowState, id: string): Pick<Box, "kind" | "name" | "type"> {
  const loop = state.loops[id];
  if (loop) return { kind: "loop", name: id, type: `${loop.type} loop` };
  const parallel = state.parallels[id];
  if (parallel) return { kind: "parallel", name: id, type: `${parallel.type} parallel` };
  const found = state.blocks[id];
  return { kind: "block", name: found?.name ?? id, type: found?.type ?? "missing block" };
}

function shift(drawing: Drawing, dx: number, dy: number): Drawing {
  const move = (p: Point) => ({ x: p.x + dx, y: p.y + dy });
  return {
    ...drawing,
    boxes: drawing.boxes.map((box) => ({ ...box, ...move(box) })),
    lines: drawing.lines.map((line) => ({
      ...line,
      points: line.points.map(move),
      labelAt: line.labelAt && move(line.labelAt),
    })),
  };
}

/** The nodes that are not members of a loop or parallel: the top level's scope. */
function topLevel(state: WorkflowState): string[] {
  const members = new Set(
    [...Object.values(state.loops), ...Object.values(state.parallels)].flatMap((c) => c.nodes),
  );
  const all = [...Object.keys(state.blocks), ...Object.keys(state.loops), ...Object.keys(state.parallels)];
  return all.filter((id) => !members.has(id));
}

export function layoutWorkflow(state: WorkflowState): Drawing {
  return layoutScope(state, topLevel(state), new Set());
}

const margin = 12;

/**
 * The execution's snapshot of the workflow (D13) as a graph, with the path it took highlighted: the blocks
 * that have a span in the trace, and the edges between two of them. What colour says, the words in each
 * node say too, and the list under the drawing says it without the drawing.
 */
export function WorkflowGraph(props: {
  state: WorkflowState;
  runs: ReadonlyMap<string, NodeRuns>;
  name: string;
}) {
  const { state, runs } = props;
  const ids = useId();
  const drawing = layoutWorkflow(state);
  const ran = (id: string) => runs.has(id);
  const blocks = drawing.boxes.filter((box) => box.kind === "block");
  const executed = blocks.filter((box) => ran(box.id));
  const width = Math.ceil(drawing.width + 2 * margin);
  const height = Math.ceil(drawing.height + 2 * margin);
  const arrow = (taken: boolean) => `url(#${ids}-${taken ? "taken" : "idle"})`;

  return (
    <div class="workflow-graph">
      <div class="graph-frame">
        <svg
          role="img"
          aria-labelledby={`${ids}-title`}
          width={width}
          height={height}
          viewBox={`${-margin} ${-margin} ${width} ${height}`}
        >
          <title id={`${ids}-title`}>
            {`The graph of ${props.name}: ${blocks.length} blocks, ${executed.length} of them ran.`}
          </title>
          <defs>
            {[true, false].map((taken) => (
              <marker
                key={String(taken)}
                id={`${ids}-${taken ? "taken" : "idle"}`}
                viewBox="0 0 10 10"
                refX="9"
                refY="5"
                markerWidth="7"
                markerHeight="7"
                orient="auto-start-reverse"
              >
                <path d="M0,0 L10,5 L0,10 z" class={taken ? "arrow taken" : "arrow"} />
              </marker>
            ))}
          </defs>
          {drawing.boxes
            .filter((box) => box.kind !== "block")
            .map((box) => (
              <ContainerFrame key={box.id} box={box} runs={runs.get(box.id)} />
            ))}
          {drawing.lines.map((line, index) => {
            const taken = ran(line.source) && ran(line.target);
            return (
              <g key={index} class="graph-edge" data-taken={taken}>
                <path d={pathOf(line.points)} marker-end={arrow(taken)} />
                {line.labelAt && line.handle && (
                  <text x={line.labelAt.x} y={line.labelAt.y} text-anchor="middle" dominant-baseline="middle">
                    {line.handle}
                  </text>
                )}
              </g>
            );
          })}
          {blocks.map((box) => (
            <BlockNode key={box.id} box={box} runs={runs.get(box.id)} />
          ))}
        </svg>
      </div>
      <PathTaken blocks={blocks} runs={runs} />
    </div>
  );
}

function pathOf(points: Point[]): string {
  return points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
}

/** How a node says what happened to it, in words. */
function outcome(runs: NodeRuns | undefined): { word: string; status: string } {
  if (!runs) return { word: "not run", status: "idle" };
  const status = runs.failed > 0 ? "error" : "success";
  if (runs.runs === 1) return { word: runs.failed ? "failed" : "ran", status };
  return { word: `ran ×${runs.runs}${runs.failed ? `, ${runs.failed} failed` : ""}`, status };
}

function BlockNode({ box, runs }: { box: Box; runs: NodeRuns | undefined }) {
  const { word, status } = outcome(runs);
  const name = box.name.length > 22 ? `${box.name.slice(0, 21)}…` : box.name;
  return (
    <g
      class={`graph-node ${status}`}
      data-block-id={box.id}
      data-executed={runs !== undefined}
      transform={`translate(${box.x},${box.y})`}
    >
      <title>{`${box.name} (${box.type}): ${word}`}</title>
      <rect width={box.width} height={box.height} rx="6" />
      <text x="10" y="21" class="name">
        {name}
      </text>
      <text x="10" y="39" class="meta">
        {box.type} · {word}
      </text>
    </g>
  );
}

function ContainerFrame({ box, runs }: { box: Box; runs: NodeRuns | undefined }) {
  const { word, status } = outcome(runs);
  return (
    <g
      class={`graph-container ${status}`}
      data-container-id={box.id}
      data-executed={runs !== undefined}
      transform={`translate(${box.x},${box.y})`}
    >
      <title>{`${box.name} (${box.type}): ${word}`}</title>
      <rect width={box.width} height={box.height} rx="8" />
      <text x="10" y="17" class="meta">
        {box.name} · {box.type} · {word}
      </text>
    </g>
  );
}

/** The drawing's text alternative: the blocks that ran in the order they first started, then the rest. */
function PathTaken({ blocks, runs }: { blocks: Box[]; runs: ReadonlyMap<string, NodeRuns> }) {
  const taken = blocks
    .flatMap((box) => {
      const run = runs.get(box.id);
      return run ? [{ box, run }] : [];
    })
    .sort((a, b) => a.run.firstStart - b.run.firstStart);
  const skipped = blocks.filter((box) => !runs.has(box.id));
  return (
    <div class="path-taken">
      <h3>Path taken</h3>
      <ol>
        {taken.map(({ box, run }) => (
          <li key={box.id} data-block-id={box.id}>
            {box.name} <span class="muted">({box.type})</span>: {outcome(run).word}
          </li>
        ))}
      </ol>
      {skipped.length > 0 && <p>Did not run: {skipped.map((box) => box.name).join(", ")}.</p>}
    </div>
  );
}
