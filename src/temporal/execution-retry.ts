import type { JsonValue } from "@bufbuild/protobuf";
import { carriedOutputChars, type ReusedOutputs } from "../engine/execution-types.js";
import { asWorkflowState } from "../engine/json-shapes.js";
import { changedNodes, reusableRun, starterInput } from "../engine/recorded-run.js";
import { preconditionFailed } from "../errors/api-errors.js";
import type { ExecutionRecord, Trigger } from "../store/records.js";
import type { Store } from "../store/store.js";

/**
 * D47: what a retry of an ended execution runs, read from its record. Below the services so that both the
 * API's RetryExecution and a bulk retry job's activity (bulk-activities.ts) read it the same way; who may
 * retry it is the caller's to check.
 */

/** Where a retry begins (D47): every block, or the first that failed, reusing what succeeded before it. */
export type RetryFrom = "start" | "failed_block";
/** Which version a retry runs (D47): the one the retried execution ran, or the workflow's current one. */
export type RetryVersion = "original" | "current";

export interface RetryOptions {
  from: RetryFrom;
  version: RetryVersion;
}

/** The start a retry makes: the original's workflow, trigger and input, on the version asked for. */
export interface PlannedRetry {
  retryOf: string;
  workflowId: string;
  trigger: Trigger;
  input: JsonValue;
  /** A saved version; undefined runs the current one. */
  version: number | undefined;
  reused: ReusedOutputs | undefined;
}

/**
 * The retry of `execution`, or failed_precondition naming what its record lacks: its input (no starter
 * span), the version it ran, or reusable outputs for a resume from the failed block.
 */
export async function plannedRetry(
  store: Store,
  execution: ExecutionRecord,
  options: RetryOptions,
): Promise<PlannedRetry> {
  const { executionId } = execution.entry;
  // The execution's read leaves the spans out (GetExecution shows none); the retry reads them.
  const entry = await store.logs.getEntry(execution.entry.id);
  const original = { ...execution, entry: entry ?? execution.entry };
  const input = starterInput(original.entry.traceSpans);
  if (!input) throw refused(executionId, "its entry has no starter span, so its input is not known");
  const version = options.version === "original" ? originalVersion(original) : undefined;
  const reused = options.from === "failed_block" ? await reusedOutputs(store, original, version) : undefined;
  return {
    retryOf: executionId,
    workflowId: original.entry.workflowId,
    trigger: original.entry.trigger,
    input: input.value as JsonValue,
    version,
    reused,
  };
}

/**
 * What a retry from the failed block reuses: the recorded runs before the first failure, per iteration
 * and branch (recorded-run.ts). On another version than the one that recorded them, each of those blocks
 * must be as it was; they travel in the start's input, so they must fit what a start carries.
 */
async function reusedOutputs(
  store: Store,
  original: ExecutionRecord,
  version: number | undefined,
): Promise<ReusedOutputs> {
  const { executionId, level, workflowId } = original.entry;
  if (level !== "error") throw refused(executionId, "it did not fail; retry it from the start");
  const run = reusableRun(original.entry.traceSpans);
  if (version === undefined) {
    const current = await store.workflows.getWorkflow(workflowId);
    const ran = asWorkflowState(original.workflowState);
    const changed = current ? changedNodes(run.nodes, ran, asWorkflowState(current.state)) : [];
    if (changed.length > 0) {
      throw refused(
        executionId,
        `blocks whose outputs it would reuse changed in version ${current?.version} (${changed.join(", ")}); ` +
          "retry it on version original, or from the start",
      );
    }
  }
  const chars = JSON.stringify(run.outputs).length;
  if (chars > carriedOutputChars) {
    throw refused(
      executionId,
      `the outputs it would reuse are ${chars} characters of JSON, more than the ${carriedOutputChars} a start ` +
        "carries; retry it from the start",
    );
  }
  return run.outputs;
}

function originalVersion({ entry, workflowVersion }: ExecutionRecord): number {
  if (typeof workflowVersion === "number") return workflowVersion;
  throw refused(
    entry.executionId,
    "it was logged before flowlog kept the version an execution ran; retry it with version current",
  );
}

/** failed_precondition: the execution's record cannot give what the retry needs. */
function refused(executionId: string, why: string) {
  return preconditionFailed({
    type: "RETRY",
    subject: `execution ${executionId}`,
    description: `execution ${executionId} cannot be retried: ${why} (D47)`,
  });
}
