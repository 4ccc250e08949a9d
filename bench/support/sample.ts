/** A latency distribution in milliseconds. */
export interface Distribution {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

export interface SampleBudget {
  /** Samples wanted. */
  count: number;
  /** Stop early past this many milliseconds, once at least `minCount` samples are in. */
  maxMs: number;
  minCount?: number;
  /** Untimed runs first, so prepared statements and the page cache are warm. */
  warmup?: number;
}

/** Times `fn` one call at a time and returns the distribution of its latency. */
export function sample(fn: () => unknown, budget: SampleBudget): Distribution {
  for (let i = 0; i < (budget.warmup ?? 5); i++) fn();
  const runs = timedRuns(budget);
  while (!runs.done()) {
    const before = performance.now();
    fn();
    runs.add(before, performance.now());
  }
  return distribution(runs.times);
}

/** The same for a call that answers with a promise (a PostgreSQL store, issue 15): each awaited in turn. */
export async function sampleAsync(fn: () => Promise<unknown>, budget: SampleBudget): Promise<Distribution> {
  for (let i = 0; i < (budget.warmup ?? 5); i++) await fn();
  const runs = timedRuns(budget);
  while (!runs.done()) {
    const before = performance.now();
    await fn();
    runs.add(before, performance.now());
  }
  return distribution(runs.times);
}

/**
 * Times two calls against each other (a deep page against the first) in turns of `turn` calls each, so
 * both see the same machine. Sampled one window after the other, the ratio of their p50s reads the
 * machine's drift between the windows as well (another process's burst, a VM's neighbour): on a 30,000-entry
 * store beside a busy core, model's deep page against its first read 0.51x, 1.64x, 0.56x and 0.94x in four
 * sequential rounds, and 1.00x to 1.08x in four interleaved ones; no filter's interleaved ratios spread
 * more than 0.10 (issue 52). Within its turn a call finds its pages in SQLite's cache, as it does when
 * sampled alone. `budget.count` counts the first call's samples.
 */
export async function samplePairAsync(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  budget: SampleBudget,
  turn = 10,
): Promise<[Distribution, Distribution]> {
  for (let i = 0; i < (budget.warmup ?? 5); i++) {
    await a();
    await b();
  }
  const runsA = timedRuns(budget);
  const runsB: number[] = [];
  while (!runsA.done()) {
    for (let i = 0; i < turn; i++) {
      const before = performance.now();
      await a();
      runsA.add(before, performance.now());
    }
    for (let i = 0; i < turn; i++) {
      const before = performance.now();
      await b();
      runsB.push(performance.now() - before);
    }
  }
  return [distribution(runsA.times), distribution(runsB)];
}

/** The budget's stopping rule: its count of samples, or its time once its minimum count is in. */
function timedRuns(budget: SampleBudget) {
  const minCount = budget.minCount ?? 20;
  const times: number[] = [];
  const start = performance.now();
  let last = start;
  return {
    times,
    add(before: number, after: number) {
      times.push(after - before);
      last = after;
    },
    done: () => times.length >= budget.count || (times.length >= minCount && last - start > budget.maxMs),
  };
}

export function distribution(times: number[]): Distribution {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return {
    samples: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Calls `fn` `count` times in a tight loop and returns the mean cost of one call in microseconds. */
export function meanMicros(fn: (i: number) => unknown, count: number): number {
  for (let i = 0; i < Math.min(count, 1_000); i++) fn(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) fn(i);
  return Number(process.hrtime.bigint() - start) / 1_000 / count;
}

/** What `work` answers, and the seconds it took on the wall clock. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = performance.now();
  const value = await work();
  return { value, seconds: (performance.now() - started) / 1000 };
}
