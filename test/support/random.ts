/** A small seeded PRNG (mulberry32), so a failing random case can be replayed from its seed. */
export function seededRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;
  const subset = <T>(items: readonly T[]): T[] => items.filter(() => next() < 0.5);
  return { next, int, pick, subset, chance: (p: number) => next() < p };
}

/**
 * The page sizes of `limits` that walk `matching` rows in at most `maxPages` pages. A random oracle test
 * still pages one row at a time, but over the filters that match few: a broad filter walked a row a page
 * was hundreds of requests that tested no boundary the narrow ones do not (issue 50: suite time).
 */
export function walkableLimits(limits: readonly number[], matching: number, maxPages = 40): number[] {
  const walkable = limits.filter((limit) => Math.ceil(matching / limit) <= maxPages);
  return walkable.length > 0 ? walkable : [Math.max(...limits)];
}
