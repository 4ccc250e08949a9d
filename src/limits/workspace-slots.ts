import { KeyedCount } from "./keyed-count.js";

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
 * What each workspace has running at once on this worker: block attempts (D26,
 * temporal/activities/block-admission.ts) and delivery attempts (temporal/activities/delivery-activities.ts)
 * each count in slots of their own. The per-workspace cap alone keeps one tenant from holding the worker,
 * not several: five workspaces with endpoints that all hang (a shared provider's outage) held all 100
 * delivery slots at 20 each. So the workspaces already running some may together hold `total - reserve`,
 * and a workspace running none still finds one of the last `reserve` free.
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
