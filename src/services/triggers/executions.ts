import { setMaxListeners } from "node:events";
import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import type { Value } from "@bufbuild/protobuf/wkt";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { type Client, isGrpcDeadlineError } from "@temporalio/client";
import type { ExecutionInput, ExecutionResult } from "../../engine/execution-types.js";
import { syncDeadlineExceeded } from "../../errors/api-errors.js";
import { admitExecution, type ExecutionMode } from "../../limits/execution-limits.js";
import type { PlanTable } from "../../limits/plans.js";
import type { Quotas } from "../../limits/quotas.js";
import type { Trigger } from "../../store/records.js";
import type { Store } from "../../store/store.js";
import { startWorkflowVersion, versionToRun } from "../../temporal/start-version.js";
import { type Member, visibleWorkflow } from "../workspace-access.js";

export interface ExecutionDependencies {
  store: Store;
  /** What each execution is admitted against (D12). */
  planLimits: PlanTable;
  /** How long a sync caller waits, and the schedule quotas (D26). */
  quotas: Quotas;
  temporal: Client;
  /** Tests run workers on their own task queues. */
  taskQueue?: string;
  clock: () => number;
}

export interface ExecutionCall {
  /**
   * Whom the execution runs as and is billed to; with the look their key's lookup made, when the call came
   * with a key, so the visibility check does not look again (issue 13).
   */
  caller: Member;
  workflowId: string;
  trigger: Trigger;
  mode: ExecutionMode;
  input: Value | undefined;
  /**
   * The API call a sync execution answers, when there is one: its wait for the result ends when the
   * client leaves, and by the call's own deadline when that comes before D26's.
   */
  call?: Pick<HandlerContext, "signal" | "timeoutMs">;
  /** A saved version to run instead of the current one (D47: a retry on the version it ran). */
  version?: number;
  /** D47: the execution this one retries, recorded before it starts. */
  retryOf?: string;
  /** D47: recorded block outputs the run takes instead of running those blocks again. */
  reused?: ExecutionInput["reused"];
}

export type Started = { executionId: string; version: number } & (
  | { result?: undefined }
  | { result: ExecutionResult }
);

/**
 * Every trigger comes through here (D15), and every retry (D47): the workflow must be visible to the user
 * (a deleted one is not, D31), the execution is admitted against the user's plan (D12), then it runs the
 * workflow's current version, or the saved one asked for, on Temporal. A sync call waits for the result,
 * at most quotas.syncExecutionDeadlineMs; an async one returns as soon as Temporal has accepted the
 * execution.
 */
export async function runWorkflow(deps: ExecutionDependencies, call: ExecutionCall): Promise<Started> {
  const { user } = call.caller;
  const workflow = await visibleWorkflow(deps.store, call.caller, call.workflowId);
  const run = await versionToRun(deps.store, workflow, call.version);
  const now = deps.clock();
  await admitExecution(deps.store, deps.planLimits, user, call.mode, now);
  const { executionId, version, handle } = await startWorkflowVersion(deps, {
    workflow,
    run,
    trigger: call.trigger,
    input: call.input ? toJson(ValueSchema, call.input) : null,
    billedUserId: user.id,
    retryOf: call.retryOf,
    reused: call.reused,
    now,
  });
  if (call.mode === "async") return { executionId, version };
  const result = await resultWithin(deps, handle, executionId, call.call);
  return { executionId, version, result: await withOutput(deps.store, result) };
}

/** A result whose output was too big to carry through Temporal gets it from the log entry (execution-types.ts). */
async function withOutput(store: Store, result: ExecutionResult): Promise<ExecutionResult> {
  if (result.outputInLog === undefined) return result;
  const output = ((await store.logs.getEntry(result.logId))?.finalOutput ?? null) as JsonValue;
  const data = output !== null && typeof output === "object" && !Array.isArray(output) ? output.data : null;
  return { ...result, output, httpBody: result.outputInLog === "whole" ? output : (data ?? null) };
}

/**
 * The execution's result, or 504 deadline_exceeded naming it once the sync deadline passes (issue 11), or
 * the call's own deadline when it sent a shorter one. The deadline bounds only the wait: the long poll for
 * the result is cut, the execution goes on and is logged like any other. So is it when the client leaves:
 * nobody would read the answer, and the poll would hold a connection to Temporal for up to D26's five
 * minutes.
 */
async function resultWithin(
  deps: ExecutionDependencies,
  handle: { result(): Promise<ExecutionResult> },
  executionId: string,
  call: ExecutionCall["call"],
): Promise<ExecutionResult> {
  const syncMs = deps.quotas.syncExecutionDeadlineMs;
  const callMs = call?.timeoutMs();
  const whose = callMs !== undefined && callMs < syncMs ? "call" : "sync";
  const deadlineMs = whose === "call" ? Math.max(0, callMs as number) : syncMs;
  // Wall time, not deps.clock: that clock drives the buckets (D12), and tests freeze it.
  const deadline = Date.now() + deadlineMs;
  const signal = call?.signal;
  /** Why the wait ended early: the deadline, or the client that left (nobody reads the answer). */
  const ended = (error?: unknown): ConnectError | undefined => {
    // A wait that ran out of time is the deadline, whatever error ended it: under load the client may be
    // backing off from a throttled call (resource_exhausted) when the deadline passes, and reports that.
    // The call's own deadline aborts its signal too, perhaps a millisecond before this wait's; a client
    // that keeps its own deadline may reset the stream a little before the server's timer fires.
    const callTimedOut =
      signal?.aborted === true &&
      (ConnectError.from(signal.reason).code === Code.DeadlineExceeded ||
        (whose === "call" && Date.now() >= deadline - clientDeadlineSlackMs));
    if (callTimedOut) return syncDeadlineExceeded(executionId, deadlineMs, "call");
    if (isGrpcDeadlineError(error) || Date.now() >= deadline) {
      return syncDeadlineExceeded(executionId, deadlineMs, whose);
    }
    if (signal?.aborted) {
      return new ConnectError(
        `the call ended before execution ${executionId} finished; it goes on`,
        Code.Canceled,
      );
    }
    return undefined;
  };
  const wait = () => deps.temporal.withDeadline(deadline, () => handle.result());
  if (!signal) {
    try {
      return await wait();
    } catch (error) {
      throw ended(error) ?? error;
    }
  }
  // The client may have left during admission or the start.
  const already = ended();
  if (already) throw already;
  // Temporal adds a listener to the signal it is given for each long poll of the wait and removes none:
  // they go on a signal of this wait's own, linked once to the call's and unlinked when the wait ends.
  // It cuts the poll in flight; the wait itself ends on the abort too, so a poll that starts just after
  // it (and would not see it) does not hold the answer.
  const waitController = new AbortController();
  setMaxListeners(0, waitController.signal);
  let unlink = () => {};
  const abortedWait = new Promise<never>((_, reject) => {
    const stop = () => {
      waitController.abort(signal.reason);
      reject(ended() ?? signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
    unlink = () => signal.removeEventListener("abort", stop);
  });
  try {
    return await Promise.race([deps.temporal.withAbortSignal(waitController.signal, wait), abortedWait]);
  } catch (error) {
    throw ended(error) ?? error;
  } finally {
    unlink();
  }
}

/** How much sooner than the server's timer a client that keeps its own deadline may give up. */
const clientDeadlineSlackMs = 100;

/** The response block's output as the API returns it. */
export function outputValue(output: JsonValue): Value {
  return fromJson(ValueSchema, output);
}
