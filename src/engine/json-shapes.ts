import type { JsonValue } from "@bufbuild/protobuf";
import type { TokenUsage, TraceSpan } from "../../gen/flowlog/logs/v1/log_entry_pb.js";
import type { Block, Edge, Loop, Parallel } from "../../gen/flowlog/workflows/v1/workflow_pb.js";

/**
 * The protobuf JSON the store keeps (records.ts): field names come from the generated messages, so a
 * renamed proto field breaks the build here; only the JSON forms of Value and of nested messages are
 * spelled out. The seed test parses every record back with fromJson against the same schemas.
 */
type Fields<M> = Omit<M, "$typeName" | "$unknown">;

export type SpanJson = Omit<Fields<TraceSpan>, "input" | "output" | "tokens" | "children"> & {
  input?: JsonValue;
  output?: JsonValue;
  tokens?: Fields<TokenUsage>;
  children: SpanJson[];
};

export type BlockJson = Fields<Block>;
export type EdgeJson = Fields<Edge>;
export type LoopJson = Omit<Fields<Loop>, "collection"> & { collection?: JsonValue };
export type ParallelJson = Omit<Fields<Parallel>, "collection"> & { collection?: JsonValue };

export interface WorkflowStateJson {
  blocks: Record<string, BlockJson>;
  edges: EdgeJson[];
  loops: Record<string, LoopJson>;
  parallels: Record<string, ParallelJson>;
}

/** A stored workflow state with every collection present, however it was saved. */
export function asWorkflowState(state: unknown): WorkflowStateJson {
  const s = (state ?? {}) as Partial<WorkflowStateJson>;
  return { blocks: s.blocks ?? {}, edges: s.edges ?? [], loops: s.loops ?? {}, parallels: s.parallels ?? {} };
}
