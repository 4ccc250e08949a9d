import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { AgentOutput } from "../blocks/agent.js";
import type { HttpRequestResult } from "../blocks/http-request.js";
import type { ModelUsage } from "../domain/model-prices.js";
import type { TraceCarrier } from "../logging/tracing.js";
import type { Trigger } from "../store/records.js";
import type { SpanJson, WorkflowStateJson } from "./json-shapes.js";

/**
 * What crosses the boundary between the execution workflow, its activities and the code that starts it.
 * Types only, so the deterministic workflow bundle, the activities and the client share one definition.
 * Everything here lands in Temporal history, which the Temporal UI shows: no `{{NAME}}` value may ever
 * appear in these shapes (D24).
 */

export type ExecutionStatus = "success" | "error";

/**
 * A start's input. Whoever can reach the Temporal frontend can write one, so the worker checks it against
 * the store before anything runs (issue 49, temporal/activities/execution-start.ts says what is covered).
 */
export interface ExecutionInput {
  executionId: string;
  workspaceId: string;
  workflowId: string;
  /** The exact version to run and snapshot (D13). */
  version: number;
  trigger: Trigger;
  /** The trigger's payload: the starter block's output. */
  input: JsonValue;
  /**
   * Whose usage the execution's cost counts against (D12): a member of the workspace, or the worker refuses
   * the start (issue 49). Null only in entries that no trigger started (seeds, samples).
   */
  billedUserId: string | null;
  /** Overrides of defaultActivityTimeouts; tests shorten them to notice a killed worker quickly. */
  timeouts?: Partial<ActivityTimeouts>;
  /**
   * `version` as the caller that admitted the execution read it (issue 12): the workflow then runs it
   * without loading it again. The worker runs its state only when it is the version the store holds
   * (issue 49: compared by digest, which a worker remembers per version, so the graph is not read again),
   * and takes the folder and the D26 bounds from the store and its own quotas, not from here. Absent when
   * the caller has not read it: a schedule runs whatever version is current when it fires.
   */
  workflow?: LoadedWorkflow;
  /**
   * D47: a retry resumed from its failed block: the recorded outputs it takes instead of running those
   * blocks again. Data the starter gives, as the input is: the graph reads them as it would have read the
   * blocks' answers, and nothing else trusts them.
   */
  reused?: ReusedOutputs;
  /**
   * D50: the W3C trace context of the call that started the execution, when tracing was on there: the
   * execution's span and its blocks' are made its children on the worker's side, from the activities
   * (logging/tracing.ts), so the workflow needs no tracing of Temporal's. Absent from a schedule's runs and
   * from executions started before it, which are traces of their own.
   */
  traceContext?: TraceCarrier;
}

/**
 * D47: recorded runs of the HTTP and agent blocks that succeeded before an execution's first failed one,
 * by span id (the block's id with its iteration and branch suffixes, run-graph.ts): the input the span
 * showed and the output the block gave.
 */
export type ReusedOutputs = Record<string, { input?: JsonValue; output: JsonValue }>;

export interface ExecutionResult {
  executionId: string;
  logId: string;
  status: ExecutionStatus;
  /** The execution's finalOutput (D17): the response block's output, else the last block's. */
  output: JsonValue;
  /** What a sync api or chat trigger answers with (D13): the response block's status, else 200, or 500. */
  httpStatus: number;
  /** ...and its body: the response block's data, else the final output. */
  httpBody: JsonValue;
  /**
   * Set, with `output` and `httpBody` null, when the two were too big for the result to carry through
   * Temporal (a payload over 2 MiB is refused, and the execution with it): they are the log entry's
   * finalOutput, the body being its `data` ("data") or all of it ("whole"). Read by executions.ts.
   */
  outputInLog?: "data" | "whole";
  /** Why the execution failed. */
  error?: string;
}

/**
 * The most of `output` and `httpBody` together, as JSON text, that a result carries itself. Counted in
 * UTF-16 units (the workflow sandbox has no Buffer), which UTF-8 turns into at most 3 bytes each: 1.5 MiB
 * at worst, under Temporal's 2 MiB.
 */
export const carriedOutputChars = 512 * 1024;

/**
 * Temporal's own retries cover infrastructure failures only (a worker dying mid-block, the database
 * briefly locked): a block's HTTP failures are outputs, and the HTTP block retries by itself (D16).
 */
export interface ActivityTimeouts {
  /** A block that stops heartbeating for this long is presumed lost with its worker and runs again. */
  heartbeatMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
}

export const defaultActivityTimeouts: ActivityTimeouts = {
  heartbeatMs: 10_000,
  retryInitialMs: 1_000,
  retryMaxMs: 30_000,
};

/**
 * The failure type of a run refused before it began: a scheduled run refused by admission (D12), a start
 * the worker does not run (issue 49). The run fails and writes nothing.
 */
export const executionRefusedFailure = "ExecutionRefused";

/**
 * The failure type of an attempt refused because its workspace's slots on the worker are full (D26), or
 * a delivery's endpoint is at its pace (D38): it waits in Temporal and is no attempt of its own
 * (block-admission.ts).
 */
export const workspaceBusyFailure = "WorkspaceBusy";

/**
 * The version an execution runs, with the workflow's folder for its log entry, and the worker's bound on
 * its block runs (D26: FLOWLOG_QUOTAS). Read with the version, so history records the figure and a replay
 * runs against the same one even if the operator changed it since.
 */
export interface LoadedWorkflow {
  folderId: string | null;
  /** The version loaded: the one asked for, or the current one when 0 was asked (schedules). */
  version: number;
  state: WorkflowStateJson;
  maxBlockRuns: number;
  /** D26's workflow.maxHistoryBytes; absent from what executions begun before it loaded. */
  maxHistoryBytes?: number;
}

/**
 * A block with side effects, as handed to its activity: the config as written (references unresolved)
 * and the outputs it references. The activity resolves `<block.path>` and `{{NAME}}` in one pass, so
 * text an output brings in is never read as a reference (an output holding `{{TOKEN}}` stays text).
 */
export interface BlockRequest {
  workspaceId: string;
  blockId: string;
  config: JsonObject;
  /** Outputs by normalized block name, only those the config references. */
  outputs: Record<string, unknown>;
  /**
   * Set when those outputs were too large to travel in a block activity's request: the key they are
   * parked under in the store, `outputs` then empty (block-activities.ts).
   */
  parkedOutputs?: string;
  /**
   * Where an HTTP block's first try, as a local activity, left off (issue 12): its attempts so far and the
   * wait before the next, and how many tries started work (D26's bound on a block that never finishes).
   */
  resume?: BlockResume;
  /** D50: the execution's caller's trace context (ExecutionInput.traceContext), the block span's root. */
  traceContext?: TraceCarrier;
}

export interface BlockResume {
  attemptsDone: number;
  waitMs: number;
  startedBefore: number;
  /**
   * Set when the first try settled the block but its outcome was too large to travel beside the other
   * first tries of its workflow task: the key it is parked under in the store, which the block activity
   * hands back as its result without calling the API again.
   */
  parked?: string;
}

/**
 * A hand-over before any attempt was made: the block activity runs the block from its first attempt.
 * `startedBefore` is 1 when the first try started work and never finished (it failed, or its worker
 * stopped), 0 when it never started (a busy workspace or worker).
 */
export function handOffFromStart(startedBefore: 0 | 1): BlockResume {
  return { attemptsDone: 0, waitMs: 0, startedBefore };
}

/**
 * An HTTP block's first try, run as a local activity (issue 12): its outcome when the first attempt
 * settled it, else where the block activity takes over (a retry to wait for, a busy workspace).
 */
export type FirstTry<Output> = { outcome: BlockOutcome<Output> } | { handOff: BlockResume };

/**
 * A block's result. A failed block has `error`, and an output later blocks can still read through an
 * error edge: an HTTP block's status, data and headers (D16), else `{error}`.
 */
export type BlockOutcome<Output> = { output: Output; error?: undefined } | { output: unknown; error: string };

export type { AgentOutput };

/**
 * The HTTP-request block's outputs (spec: <api.data>, <api.status>, <api.headers>, <api.error>), and how
 * many attempts its retries took (D16). Per-attempt timings stay out: history and logs stay small.
 */
export type ApiOutput = Pick<HttpRequestResult, "data" | "status" | "headers" | "error" | "attempts">;

/** Everything the log entry of one execution needs (D17); the activity prices the usages and ids it. */
export interface ExecutionLog {
  execution: Omit<ExecutionInput, "input" | "timeouts">;
  folderId: string | null;
  status: ExecutionStatus;
  startedAt: number;
  endedAt: number;
  traceSpans: SpanJson[];
  finalOutput: JsonValue;
  usages: ModelUsage[];
  workflowState: WorkflowStateJson;
  /** Set when the execution parked outputs in the store (block-activities.ts), which the entry now holds. */
  releaseParked?: boolean;
}
