/**
 * Workflow time as Temporal keeps it for an execution: it stands still while the workflow computes, and
 * moves on only when every branch waits for a block, to the moment the earliest of them finishes. So the
 * engine stamps spans (trace-span.ts) with simulated times exactly as it stamps real ones, parallel
 * branches overlapping, and the seed need not wait for any of it.
 */
export class SimulatedClock {
  private time: number;
  private readonly timers: { at: number; wake: () => void }[] = [];

  constructor(start: number) {
    this.time = start;
  }

  /** The engine's `now()`. */
  readonly now = (): number => this.time;

  /** Resolves when the clock reaches `ms` from now. */
  sleep(ms: number): Promise<void> {
    return new Promise((wake) => this.timers.push({ at: this.time + ms, wake }));
  }

  /**
   * Runs `work` to its end, moving the clock each time nothing else can happen. Every microtask has run
   * by the next macrotask, so when one comes the engine can only be waiting for a timer.
   */
  async run<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    const result = work.finally(() => {
      settled = true;
    });
    while (!settled) {
      await nextTurn();
      if (!settled && !this.wakeEarliest()) throw new Error("the simulated execution waits for nothing");
    }
    return result;
  }

  /** The earliest timer, the first set among equals, so a seed always replays the same. */
  private wakeEarliest(): boolean {
    let earliest = 0;
    for (let i = 1; i < this.timers.length; i++) {
      if ((this.timers[i]?.at ?? 0) < (this.timers[earliest]?.at ?? 0)) earliest = i;
    }
    const [timer] = this.timers.splice(earliest, 1);
    if (!timer) return false;
    this.time = timer.at;
    timer.wake();
    return true;
  }
}

/** The next macrotask; the callback form, which costs less than node:timers/promises' setImmediate. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
