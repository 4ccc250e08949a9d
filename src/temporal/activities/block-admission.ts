import { ApplicationFailure, Context } from "@temporalio/activity";
import { ApplicationFailureCategory } from "@temporalio/common";
import { workspaceBusyFailure } from "../../engine/execution-types.js";
import { type SlotLimits, WorkspaceSlots } from "../../limits/workspace-slots.js";

/**
 * Whether an attempt of a block activity (api, agent) may start on this worker.
 *
 * D26: at most `perWorkspace` block activities of one workspace run at once on a worker, so one tenant
 * cannot hold every activity slot. An attempt over the cap fails at once, freeing its slot, with a
 * retryable WorkspaceBusy failure whose `nextRetryDelay` the server waits out: the block waits its turn
 * in Temporal, not in a slot, and the wait adds no history events (an activity's retries are recorded
 * only with its last attempt). A waiting workflow is therefore never starved of a slot by another
 * tenant, only by its own workspace's running blocks.
 *
 * Since busy attempts must not use up the block's retries, the block activity has no maximum attempts
 * (execute-workflow.ts). What Temporal retried it for before, an attempt that started work and never
 * finished (its worker died, the store failed), is bounded here instead: each admitted attempt records
 * in its heartbeat details how many attempts started work, and the fourth is refused for good.
 */
export class BlockAdmission {
  private readonly slots: WorkspaceSlots;

  constructor(limits: SlotLimits) {
    this.slots = new WorkspaceSlots("block activities", limits);
  }

  /**
   * Runs `work` once the attempt is admitted. `beat` heartbeats with this attempt's details: every
   * heartbeat of the attempt must carry them, since each one replaces the last. `startedBefore` counts the
   * tries that started work before this activity did (the block's local first try, issue 12).
   */
  async run<T>(workspaceId: string, work: (beat: () => void) => Promise<T>, startedBefore = 0): Promise<T> {
    const refused = this.slots.refusal(workspaceId);
    if (refused) throw workspaceBusy(refused);
    const context = Context.current();
    const started = (startedAttempts(context) ?? startedBefore) + 1;
    if (started > maxStartedAttempts) {
      throw ApplicationFailure.nonRetryable(
        `the block started ${maxStartedAttempts} times and never finished: its worker was lost or its store failed each time`,
        "BlockAttemptsExhausted",
      );
    }
    const details: AttemptDetails = { started };
    const beat = () => context.heartbeat(details);
    return this.slots.holding(workspaceId, () => {
      beat();
      return work(beat);
    });
  }

  /**
   * The block's first try as a local activity (issue 12): runs `work` when the workspace has a free slot
   * now, else answers undefined at once, and the block activity then waits its turn in Temporal.
   */
  async tryRun<T>(workspaceId: string, work: () => Promise<T>): Promise<T | undefined> {
    if (this.slots.refusal(workspaceId)) return undefined;
    return this.slots.holding(workspaceId, work);
  }
}

/** The three attempts Temporal's retry policy allowed a block before D26 (execute-workflow.ts). */
const maxStartedAttempts = 3;

interface AttemptDetails {
  started: number;
}

/**
 * The tries started so far, as the last attempt's heartbeat recorded them (`{ started }`); undefined
 * before any attempt started work. A refused attempt never heartbeats, so the count survives refusals.
 */
export function startedAttempts(context: Context): number | undefined {
  const details = context.info.heartbeatDetails as Partial<AttemptDetails> | undefined;
  return typeof details?.started === "number" ? details.started : undefined;
}

/**
 * Waits grow from 200 ms to 5 s with the attempts: a block that just missed a slot comes back soon, a
 * long queue polls the worker gently. Every retry is a task the server dispatches, so a long queue's
 * retries would slow every other workspace's tasks (bench/README.md, fairness); with many waiters one of
 * them still comes back soon after a slot frees. Jitter spreads waiters that were refused together.
 */
const firstBusyWaitMs = 200;
const longestBusyWaitMs = 5_000;

/**
 * An attempt refused because its workspace's slots are full (`refusal`, from WorkspaceSlots): it frees its
 * own slot and waits in Temporal.
 */
export function workspaceBusy(refusal: string): ApplicationFailure {
  return waitInTemporal(`${refusal}; waiting for one to end`, busyRetryDelayMs(attemptNow()));
}

/**
 * A delivery attempt refused by its endpoint's pace (D38, limits/endpoint-pace.ts): it waits in Temporal
 * until a place may open (`opensInMs`), and a jitter that grows with its refusals like a busy attempt's
 * wait, so the many deliveries of a drained backlog do not all come back at that one instant. It is no
 * attempt, like a busy one, and has the same failure type, which the delivery workflow knows.
 */
export function endpointPaced(throttlePerSecond: number, opensInMs: number): ApplicationFailure {
  return waitInTemporal(
    `the endpoint is paced at ${throttlePerSecond} deliveries a second; waiting for its turn`,
    pacedRetryDelayMs(opensInMs, attemptNow()),
  );
}

/** A busy attempt's wait, of Temporal's `attempt` of the activity: half its busy wait to all of it. */
export function busyRetryDelayMs(attempt: number, random = Math.random): number {
  const wait = busyWaitMs(attempt);
  return temporalRetryDelayMs(wait / 2 + random() * (wait / 2));
}

/** A paced attempt's wait: until its place may open, and up to a busy wait's jitter more. */
export function pacedRetryDelayMs(opensInMs: number, attempt: number, random = Math.random): number {
  return temporalRetryDelayMs(opensInMs + random() * busyWaitMs(attempt));
}

/**
 * A wait as the `nextRetryDelay` of an activity's failure: whole milliseconds, and never 0. Temporal
 * (1.29) takes an activity's nextRetryDelay as its retry's maximum interval too, and a retry of 0 under
 * a maximum of 0 means retry no more (RETRY_STATE_TIMEOUT): the activity then fails for good with the
 * wait as its failure. A paced delivery whose place opened at once, with a jitter that rounded to 0, was
 * failed that way without being sent.
 */
export function temporalRetryDelayMs(ms: number): number {
  return Math.max(1, Math.round(ms));
}

function busyWaitMs(attempt: number): number {
  return Math.min(longestBusyWaitMs, firstBusyWaitMs * 1.5 ** (attempt - 1));
}

const attemptNow = () => Context.current().info.attempt;

function waitInTemporal(message: string, nextRetryDelay: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: workspaceBusyFailure,
    message,
    nextRetryDelay,
    // A wait, not an error: the SDK logs it at debug level and leaves it out of failure metrics.
    category: ApplicationFailureCategory.BENIGN,
  });
}
