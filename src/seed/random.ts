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

  constructor(seed: string) {
    const digest = createHash("sha256").update(seed).digest();
    this.a = digest.readUInt32LE(0);
    this.b = digest.readUInt32LE(4);
    this.c = digest.readUInt32LE(8);
    this.d = digest.readUInt32LE(12);
    for (let i = 0; i < 12; i++) this.next();
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
    for (let i = 0; i < 12; i += 4) bytes.writeUInt32LE(Math.floor(this.next() * 4294967296), i);
    return newId(kind, bytes);
  }
}
