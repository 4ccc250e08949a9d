import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  defineSignal,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from "@temporalio/workflow";
import {
  type ActivityTimeouts,
  type ApiOutput,
  type BlockOutcome,
  type BlockRequest,
  carriedOutputChars,
  defaultActivityTimeouts,
  type ExecutionInput,
  type ExecutionResult,
  executionRefusedFailure,
  handOffFromStart,
  type LoadedWorkflow,
} from "../../engine/execution-types.js";
import {
  type GraphRunResult,
  InterruptedRun,
  runGraph,
  type SideEffectBlocks,
} from "../../engine/run-graph.js";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";
import { cancelReasonSignal, executionIdOf } from "../execution-ids.js";

/**
 * One workflow execution (issue 4, item 2): load the exact version, walk its graph with the engine, then
 * write its one log entry (D17), whatever happened. Deterministic orchestration only: the graph walk and
 * the starter, condition and response blocks run here; api and agent blocks, the store and every
 * `{{NAME}}` value stay in activities (D24: this workflow's history is shown in the Temporal UI).
 *
 * The result is returned even when the execution failed (status error, httpStatus 500), so a sync trigger
 * reads it the same way either way; a cancelled execution is logged as failed (D47: error `cancelled`).
 *
 * A scheduled run that admission refuses (D12) is no execution: it writes no log entry and so notifies
 * nobody (issue 11; a refused `@every` schedule would otherwise flood logs and subscribers). The Temporal
 * workflow fails with the reason instead, which operators see in the Temporal UI and the schedule's
 * recent actions, as failed rather than hidden among completed runs. So does a start the worker refuses
 * before anything runs: one that names another workspace's workflow, hands over a state that is not the
 * version saved, or bills someone outside the workspace (issue 49, checkedWorkflow below).
 */
export async function executeWorkflow(scheduled: ExecutionInput): Promise<ExecutionResult> {
  const startedAt = Date.now();
  // A schedule starts every run with the same arguments; each run's executionId is then its own Temporal
  // workflow id, which the schedule makes unique by appending the fire time (D15).
  const input = {
    ...scheduled,
    executionId: scheduled.executionId || executionIdOf(workflowInfo().workflowId),
  };
  const activities = activitiesWith({ ...defaultActivityTimeouts, ...input.timeouts }, input.traceContext);
  const cancellation: Cancellation = {};
  setHandler(cancelReason, (reason) => {
    cancellation.reason = reason;
  });
  let workflow: LoadedWorkflow | undefined;
  let run: GraphRunResult;
  try {
    workflow = patched(checkedStart)
      ? await checkedWorkflow(activities.store, input)
      : await uncheckedWorkflow(activities.store, input);
    run = await runGraph(workflow.state, {
      workspaceId: input.workspaceId,
      input: input.input,
      blocks: historyBounded(activities.blocks, workflow.maxHistoryBytes),
      now: () => Date.now(),
      maxBlockRuns: workflow.maxBlockRuns,
      ...(input.reused ? { reused: input.reused } : {}),
    });
  } catch (error) {
    const refusal = refusalOf(error);
    if (refusal !== undefined) throw ApplicationFailure.nonRetryable(refusal, executionRefusedFailure);
    run = stoppedRun(error, cancellation);
  }
  const { executionId, workspaceId, workflowId, trigger, billedUserId, traceContext } = input;
  const version = workflow?.version ?? input.version;
  const { logId } = await CancellationScope.nonCancellable(() =>
    activities.log.writeExecutionLog({
      execution: {
        executionId,
        workspaceId,
        workflowId,
        version,
        trigger,
        billedUserId,
        // D50: the log write records the execution's span, its caller's child.
        ...(traceContext ? { traceContext } : {}),
      },
      folderId: workflow?.folderId ?? null,
      status: run.status,
      startedAt,
      endedAt: Date.now(),
      traceSpans: run.spans,
      finalOutput: run.finalOutput,
      usages: run.usages,
      workflowState: workflow?.state ?? { blocks: {}, edges: [], loops: {}, parallels: {} },
      ...(activities.parking.used ? { releaseParked: true } : {}),
    }),
  );
  const answer = { output: run.finalOutput, httpBody: run.httpBody };
  return {
    executionId,
    logId,
    status: run.status,
    httpStatus: run.httpStatus,
    ...(JSON.stringify(answer).length <= carriedOutputChars
      ? answer
      : // The response block's data, or, with none, the final output itself (run-graph.ts).
        { output: null, httpBody: null, outputInLog: run.httpBody === run.finalOutput ? "whole" : "data" }),
    ...(run.error === undefined ? {} : { error: run.error }),
  };
}

/**
 * Issue 49: a start is checked against the store before anything runs (execution-start.ts): the workflow
 * is its workspace's, the state it hands over is the version saved, and it is billed to a member; else it
 * is refused like a scheduled run admission refuses, and writes nothing. Before it, a worker ran whatever
 * a start carried; a history begun then replays as it was written (uncheckedWorkflow).
 */
export const checkedStart = "checked-start";

type StoreActivities = Pick<Activities, "admitScheduledRun" | "checkHandedWorkflow" | "loadWorkflowVersion">;

async function checkedWorkflow(store: StoreActivities, input: ExecutionInput): Promise<LoadedWorkflow> {
  const { executionId, workspaceId, workflowId, version, billedUserId, trigger, workflow: handed } = input;
  const start = { executionId, workspaceId, workflowId, version, billedUserId, trigger };
  const workflow = handed
    ? {
        ...(await store.checkHandedWorkflow({ ...start, version: handed.version, state: handed.state })),
        state: handed.state,
      }
    : await store.loadWorkflowVersion(start);
  // Admitted once it is known to be the workspace's own run: a refused start takes nobody's token (D12).
  if (admitsItself(input)) await store.admitScheduledRun({ billedUserId, workflowId });
  return workflow;
}

/**
 * D47: a retry of a scheduled run keeps its trigger, and was admitted by the API like any call, which
 * hands its version over; a schedule's own runs never do. Before it, every scheduled run was admitted here.
 */
export const retriedScheduleAdmitted = "retried-schedule-admitted";

/** A schedule's own run has no caller to admit it (D12): the worker does. */
function admitsItself(input: ExecutionInput): boolean {
  if (input.trigger !== "schedule") return false;
  return input.workflow === undefined || !patched(retriedScheduleAdmitted);
}

/** Before issue 49: admitted, then run as handed over or loaded. Kept for histories that replay it. */
async function uncheckedWorkflow(store: StoreActivities, input: ExecutionInput): Promise<LoadedWorkflow> {
  const { executionId, workspaceId, workflowId, version, billedUserId, trigger } = input;
  if (trigger === "schedule") await store.admitScheduledRun({ billedUserId, workflowId });
  const start = { executionId, workspaceId, workflowId, version, billedUserId, trigger };
  return input.workflow ?? (await store.loadWorkflowVersion(start));
}

/**
 * Temporal retries an activity only for what the activity could not report itself: a worker that died
 * (noticed by the heartbeat timeout) or a store briefly unavailable. The log write retries until it lands,
 * since every execution must have its entry (D17); an entry the store keeps refusing is written as an
 * error entry instead (execution-activities.ts), so only a store that takes nothing at all keeps it going.
 *
 * The two store reads and writes are local activities: short SQLite statements on the worker's own
 * connection, run without a round trip through the server's task queues. A local activity whose worker
 * dies before it is recorded runs again on replay, which the idempotent log write allows.
 */
function activitiesWith(timeouts: ActivityTimeouts, traceContext: ExecutionInput["traceContext"]) {
  const retry = {
    initialInterval: timeouts.retryInitialMs,
    maximumInterval: timeouts.retryMaxMs,
    backoffCoefficient: 2,
  };
  const store = proxyLocalActivities<Activities>({
    startToCloseTimeout: "30 seconds",
    retry: { ...retry, maximumAttempts: 5 },
  });
  const log = proxyLocalActivities<Activities>({ startToCloseTimeout: "30 seconds", retry });
  // A block's own timeouts and retries (D16: 30 s per request, 3 retries by default, configurable) bound
  // its run; this generous ceiling only catches what they do not. Heartbeats notice a lost worker early.
  // No maximum attempts: an attempt refused while its workspace is busy (D26) must not use up the block's
  // retries; the activity bounds the attempts that start work itself (block-admission.ts).
  const block = proxyActivities<Activities>({
    startToCloseTimeout: "30 minutes",
    heartbeatTimeout: timeouts.heartbeatMs,
    retry,
  });
  // The HTTP block's first try (issue 12) ends with its first attempt: bounded by the block's own request
  // timeout, or it hands over at once. Tried once: whatever stops it, the block activity goes on.
  const firstTry = proxyLocalActivities<Activities>({ startToCloseTimeout: "30 minutes", retry: once });
  const budget = new FirstTryBudget();
  // Whether anything was parked in the store, for the log write to release; most executions park nothing
  // and their log write costs no second commit.
  const parking = { used: false };
  // D50: each block's span is the child of the execution's, which the caller's context names. Adding it
  // changes only activities' arguments, which a replay does not compare: no patch.
  const traced = (request: BlockRequest) => (traceContext ? { ...request, traceContext } : request);
  const carried = (request: BlockRequest) => carriedRequest(request, store, parking);
  const blocks: SideEffectBlocks = {
    api: (request) => apiBlock(traced(request), firstTry, block, budget, carried, parking),
    agent: (request) => settled(carried(traced(request)).then((r) => block.runAgentBlock(r))),
  };
  return { store, log, blocks, parking };
}

/**
 * Issue 12: an execution whose HTTP blocks answer at once runs in one workflow task, its blocks and its log
 * entry as local activities. A block that needs a retry, finds its workspace busy (D26) or loses its first
 * try becomes a block activity from there on, counting the attempts made. A history begun before that
 * (an execution in flight across the upgrade) replays as it was written: every block an activity.
 */
export const apiBlockFirstTryLocal = "api-block-first-try-local";

const once = { maximumAttempts: 1 };

/** Before it, an execution tried every HTTP block first as a local activity, however many at once. */
export const firstTryBudget = "first-try-budget";

/**
 * A first try's outcome travels in its execution's workflow task completion, and a task runs its execution's
 * first tries one after another while they answer at once: five blocks in a row answering 900 KiB each made
 * a completion of 4.6 MiB, over Temporal's 4 MiB gRPC limit, which failed and ran again for as long as the
 * execution lived. Once an execution's first tries have brought back as many characters of output as a
 * result may carry (carriedOutputChars, 512 Ki), its later HTTP blocks start as block activities, whose
 * results travel one by one. First tries running at the same time, in parallel branches, are bounded where
 * they run: past that budget among them, an outcome is parked in the store and handed back by the block
 * activity (block-activities.ts). (Holding branches back instead would delay them: an activity is scheduled
 * only when its workflow task's first tries have ended.)
 */
class FirstTryBudget {
  private carriedChars = 0;

  take(): boolean {
    return !patched(firstTryBudget) || this.carriedChars < carriedOutputChars;
  }

  /** Counts until the budget is spent: past it no first try runs, and the output need not be measured. */
  settle(outcome: BlockOutcome<ApiOutput> | undefined): void {
    if (!patched(firstTryBudget) || this.carriedChars >= carriedOutputChars) return;
    this.carriedChars += JSON.stringify(outcome?.output ?? null).length;
  }
}

/** Before it, an execution started its blocks whatever the size of its history. */
export const historyBudget = "history-budget";

/**
 * The most one block in flight may add to its execution's history: its request (the outputs it references
 * are parked past carriedOutputChars) and its outcome (at most blockOutputBytes, 1 MiB by default), each
 * under Temporal's 2 MiB payload limit.
 */
const historyPerBlockBytes = 2 * 1024 * 1024;

/**
 * Temporal terminates an execution whose history passes `limit.historySize.error` (50 MiB by default)
 * before its entry is written: a loop of 70 HTTP blocks answering 900 KiB each got there, unlogged. A block
 * with side effects starts only while the history so far, with 2 MiB for it and for each block still in
 * flight, stays within D26's workflow.maxHistoryBytes. Parallel branches past that wait for blocks in
 * flight to end; a block that does not fit even alone fails naming the quota, so the execution goes on to
 * its error path and its entry. At the default 40 MiB, nineteen blocks fit in flight at once beside the few
 * kilobytes a history starts with, one fewer than one workspace may run on a worker
 * (concurrentBlockActivities): a twentieth parallel branch starts when the first of them ends.
 */
function historyBounded(blocks: SideEffectBlocks, maxHistoryBytes: number | undefined): SideEffectBlocks {
  if (maxHistoryBytes === undefined) return blocks;
  let inFlight = 0;
  const fits = () => workflowInfo().historySize + (inFlight + 1) * historyPerBlockBytes <= maxHistoryBytes;
  const bounded =
    <Output>(run: (request: BlockRequest) => Promise<BlockOutcome<Output>>) =>
    async (request: BlockRequest): Promise<BlockOutcome<Output>> => {
      if (!fits() && patched(historyBudget)) {
        // Branches released together check again one by one, each seeing the others it let start.
        while (!fits() && inFlight > 0) await condition(() => inFlight === 0 || fits());
        if (!fits()) {
          const error = `the execution's Temporal history is ${workflowInfo().historySize} bytes: another block could take it past the ${maxHistoryBytes} it may reach (D26: FLOWLOG_QUOTAS workflow.maxHistoryBytes)`;
          return { output: { error }, error };
        }
      }
      inFlight++;
      try {
        return await run(request);
      } finally {
        inFlight--;
      }
    };
  return { api: bounded(blocks.api), agent: bounded(blocks.agent) };
}

/** Before it, a block activity's request carried the outputs it references, however large. */
export const parkedBlockInputs = "parked-block-inputs";

/**
 * A block activity's request as it travels: its input is one Temporal payload, which the server refuses
 * over 2 MiB (`limit.blobSize.error`), and refusing it terminated the execution before its entry was
 * written. A block posting the results of a large parallel did that. Past carriedOutputChars (1.5 MiB at
 * worst in UTF-8), the outputs it references are parked in the store by a local activity, whose input stays
 * on the worker, and the block activity reads them back (block-activities.ts).
 */
async function carriedRequest(
  request: BlockRequest,
  store: Pick<Activities, "parkBlockInputs">,
  parking: { used: boolean },
): Promise<BlockRequest> {
  if (JSON.stringify(request.outputs).length <= carriedOutputChars || !patched(parkedBlockInputs)) {
    return request;
  }
  parking.used = true;
  return { ...request, outputs: {}, parkedOutputs: await store.parkBlockInputs(request.outputs) };
}

async function apiBlock(
  request: BlockRequest,
  firstTry: Pick<Activities, "tryApiBlock">,
  block: Pick<Activities, "runApiBlock">,
  budget: FirstTryBudget,
  carried: (request: BlockRequest) => Promise<BlockRequest>,
  parking: { used: boolean },
): Promise<BlockOutcome<ApiOutput>> {
  const run = (r: BlockRequest) => settled(carried(r).then((c) => block.runApiBlock(c)));
  if (!patched(apiBlockFirstTryLocal)) return run(request);
  if (!budget.take()) return run(request);
  let resume: BlockRequest["resume"];
  let outcome: BlockOutcome<ApiOutput> | undefined;
  try {
    const tried = await firstTry.tryApiBlock(request);
    if ("outcome" in tried) outcome = tried.outcome;
    else resume = tried.handOff;
    if (resume?.parked !== undefined) parking.used = true;
  } catch (error) {
    // Cancelled, the execution stops; failed (its store, its timeout), the try counts as one started.
    if (isCancellation(error)) throw error;
    resume = handOffFromStart(1);
  } finally {
    budget.settle(outcome);
  }
  return outcome ?? run({ ...request, resume });
}

/** A block activity that failed for good after its retries fails the block, not the workflow task. */
async function settled<Output>(outcome: Promise<BlockOutcome<Output>>): Promise<BlockOutcome<Output>> {
  try {
    return await outcome;
  } catch (error) {
    const message = activityFailureMessage(error);
    if (message === undefined) throw error;
    return { output: { error: message }, error: message };
  }
}

/** Why admission refused the run, or undefined for any other failure. */
function refusalOf(error: unknown): string | undefined {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  return failure instanceof ApplicationFailure && failure.type === executionRefusedFailure
    ? failure.message
    : undefined;
}

const cancelReason = defineSignal<[string]>(cancelReasonSignal);

/** What CancelExecution said before it cancelled (D47). */
interface Cancellation {
  reason?: string;
}

/**
 * D47: a cancelled execution's entry says `cancelled`, with the reason CancelExecution gave, and keeps the
 * spans of what ended before the cancellation. Before it, the entry said "the execution was cancelled" and
 * kept no span; a history cancelled then replays so.
 */
export const cancelledWithReason = "cancelled-with-reason";

/** The execution stopped before or during its graph: cancelled, or its version could not be loaded. */
function stoppedRun(error: unknown, cancellation: Cancellation): GraphRunResult {
  const cause = error instanceof InterruptedRun ? error.reason : error;
  if (isCancellation(cause) && patched(cancelledWithReason)) {
    const spans = error instanceof InterruptedRun ? error.spans : [];
    const { reason } = cancellation;
    return failedRun("cancelled", spans, reason === undefined || reason === "" ? {} : { reason });
  }
  const message = isCancellation(cause) ? "the execution was cancelled" : activityFailureMessage(cause);
  if (message === undefined) throw cause;
  return failedRun(message, [], {});
}

function failedRun(
  error: string,
  spans: GraphRunResult["spans"],
  extra: { reason?: string },
): GraphRunResult {
  const output = { error, ...extra };
  return {
    status: "error",
    error,
    spans,
    finalOutput: output,
    httpStatus: 500,
    httpBody: output,
    usages: [],
  };
}

/**
 * Why an activity failed for good, or undefined for anything else (a cancellation, a bug in workflow code,
 * which must fail the workflow task so a fixed worker can replay it). A failed local activity surfaces as
 * its own ApplicationFailure, a failed activity as an ActivityFailure caused by it.
 */
function activityFailureMessage(error: unknown): string | undefined {
  if (isCancellation(error)) return undefined;
  if (error instanceof ActivityFailure)
    return error.cause ? `${error.message}: ${error.cause.message}` : error.message;
  return error instanceof ApplicationFailure ? error.message : undefined;
}
