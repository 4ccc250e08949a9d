import { createHash } from "node:crypto";
import { type IdKind, newId } from "../util/ids.js";

/**
 * A seeded pseudo-random source (sfc32, seeded from SHA-256 of the seed text): the same seed yields the
 * same demo data, identifiers included, so tests and bug reports can reproduce a data set exactly.
 */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** A seed text, or the four words of state a fork draws. */
  constructor(seed: string | readonly [number, number, number, number]) {
    const digest = typeof seed === "string" ? createHash("sha256").update(seed).digest() : undefined;
    [this.a, this.b, this.c, this.d] = digest
      ? [digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8), digest.readUInt32LE(12)]
      : (seed as readonly [number, number, number, number]);
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A source of its own, seeded from this one: what it draws no longer depends on when it draws. */
  fork(): Random {
    return new Random([this.word(), this.word(), this.word(), this.word()]);
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }

  /** One of the values, with probability proportional to its weight. */
  weighted<T>(choices: readonly (readonly [T, number])[]): T {
    let rest = this.next() * choices.reduce((sum, [, weight]) => sum + weight, 0);
    for (const [value, weight] of choices) {
      rest -= weight;
      if (rest < 0) return value;
    }
    const last = choices[choices.length - 1];
    if (!last) throw new Error("weighted pick from an empty list");
    return last[0];
  }

  /**
   * Log-normal around a median: most values near it, a long tail above, the shape of real latencies
   * and token counts.
   */
  logNormal(median: number, sigma: number): number {
    const u = 1 - this.next();
    const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
    return median * Math.exp(sigma * normal);
  }

  /** An identifier from util/ids, its random bytes drawn from this source so seeded data repeats. */
  id(kind: IdKind): string {
    const bytes = Buffer.alloc(12);
    for (let i = 0; i < 12; i += 4) bytes.writeUInt32LE(this.word(), i);
    return newId(kind, bytes);
  }

  private word(): number {
    return Math.floor(this.next() * 4294967296);
  }
}
