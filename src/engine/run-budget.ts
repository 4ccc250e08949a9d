/**
 * The block runs one execution may make (D26: 1,000 by default, loop iterations and parallel branches
 * counted at every depth). Saving refuses a workflow whose stated counts exceed it; this enforces it again
 * where counts are only known at run time (a forEach over a collection). Pure, for the workflow bundle.
 */
export class RunBudget {
  private taken = 0;
  /** Why the execution stops, once a run was asked for beyond the limit. */
  exhausted: string | undefined;

  constructor(private readonly limit: number) {}

  /** Runs taken so far. */
  get used(): number {
    return this.taken;
  }

  /** Takes one run; false, with `exhausted` set, when the limit is reached. */
  take(): boolean {
    if (this.taken >= this.limit) {
      this.exhausted = `the execution stopped at its limit of ${this.limit} block runs`;
      return false;
    }
    this.taken++;
    return true;
  }
}
