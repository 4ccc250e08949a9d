import { ApplicationFailure, Context } from "@temporalio/activity";
import { ApplicationFailureCategory } from "@temporalio/common";
import { workspaceBusyFailure } from "../../engine/execution-types.js";
import { KeyedCount } from "../../util/keyed-count.js";

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

/** How many attempts of one kind (block activities, delivery attempts) a worker runs at once. */
export interface SlotLimits {
  /** D26: at most this many of one workspace's at once. */
  perWorkspace: number;
  /** At most this many in all: fewer than the worker's activity slots, which its other activities need too. */
  total: number;
  /** The last `reserve` of `total` go only to workspaces running none: busy tenants together cannot hold them. */
  reserve: number;
}

/**
 * What each workspace has running at once on this worker: block attempts (D26) and delivery attempts
 * (delivery-activities.ts) each count in slots of their own. The per-workspace cap alone keeps one tenant
 * from holding the worker, not several: five workspaces with endpoints that all hang (a shared provider's
 * outage) held all 100 delivery slots at 20 each. So the workspaces already running some may together
 * hold `total - reserve`, and a workspace running none still finds one of the last `reserve` free.
 */
export class WorkspaceSlots {
  private readonly running = new KeyedCount();

  constructor(
    /** What an attempt is, for the refusals: "block activities", "delivery attempts". */
    private readonly noun: string,
    private readonly limits: SlotLimits,
  ) {}

  /** Why the workspace may not start one more now, or undefined when it may. */
  refusal(workspaceId: string): string | undefined {
    const { perWorkspace, total, reserve } = this.limits;
    const mine = this.running.of(workspaceId);
    const held = this.running.total;
    if (mine >= perWorkspace) {
      return `${perWorkspace} ${this.noun} of this workspace are running on this worker`;
    }
    if (held >= total) return `${total} ${this.noun} are running on this worker, its most at once`;
    if (mine > 0 && held >= total - reserve) {
      return (
        `this workspace has ${mine} of the ${held} ${this.noun} running on this worker, whose last ` +
        `${reserve} slots are kept for workspaces running none`
      );
    }
    return undefined;
  }

  /** Runs `work` in one of the workspace's slots; the caller has checked that one is free. */
  holding<T>(workspaceId: string, work: () => Promise<T>): Promise<T> {
    return this.running.holding(workspaceId, work);
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
  const { attempt } = Context.current().info;
  const wait = Math.min(longestBusyWaitMs, firstBusyWaitMs * 1.5 ** (attempt - 1));
  return ApplicationFailure.create({
    type: workspaceBusyFailure,
    message: `${refusal}; waiting for one to end`,
    nextRetryDelay: Math.round(wait / 2 + Math.random() * (wait / 2)),
    // A wait, not an error: the SDK logs it at debug level and leaves it out of failure metrics.
    category: ApplicationFailureCategory.BENIGN,
  });
}
