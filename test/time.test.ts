import { describe, expect, it } from "vitest";
import { Random } from "../src/seed/random.js";
import { isoFromMs } from "../src/util/time.js";

const first = Date.parse("0000-01-01T00:00:00.000Z");
const last = Date.parse("9999-12-31T23:59:59.999Z");
const dayMs = 86_400_000;

describe("D7: timestamps are ISO 8601 with milliseconds and Z, as Date#toISOString writes them", () => {
  it("formats random milliseconds of years 0000 to 9999 exactly as Date#toISOString", () => {
    const rng = new Random("iso-from-ms");
    const different: string[] = [];
    for (let i = 0; i < 500_000; i++) {
      // Two draws, so every millisecond of the range can come up, not only multiples of a 32-bit step.
      const ms = first + Math.floor((rng.next() + rng.next() / 4294967296) * (last - first + 1));
      if (isoFromMs(ms) !== new Date(ms).toISOString()) different.push(`${ms}: ${isoFromMs(ms)}`);
    }
    expect(different).toEqual([]);
  });

  it("formats the edges of days, months, leap years and centuries exactly", () => {
    const days = ["0000-01-01", "0000-02-29", "1900-02-28", "1900-03-01", "1969-12-31", "1970-01-01"];
    days.push("2000-02-29", "2024-02-29", "2100-03-01", "9999-12-31");
    for (const day of days) {
      const midnight = Date.parse(`${day}T00:00:00.000Z`);
      for (const ms of [midnight - 1, midnight, midnight + 1, midnight + dayMs - 1]) {
        if (ms < first || ms > last) continue;
        expect(isoFromMs(ms)).toBe(new Date(ms).toISOString());
      }
    }
    expect(isoFromMs(first)).toBe("0000-01-01T00:00:00.000Z");
    expect(isoFromMs(last)).toBe("9999-12-31T23:59:59.999Z");
  });

  it("formats consecutive timestamps across midnight exactly, in either direction", () => {
    const midnight = Date.parse("2026-03-01T00:00:00.000Z");
    for (let ms = midnight - 2_000; ms < midnight + 2_000; ms += 7) {
      expect(isoFromMs(ms)).toBe(new Date(ms).toISOString());
      expect(isoFromMs(2 * midnight - ms)).toBe(new Date(2 * midnight - ms).toISOString());
    }
  });

  it("writes what Date#toISOString writes outside four-digit years and for fractions", () => {
    for (const ms of [first - 1, last + 1, -8.64e15, 8.64e15, 1.5, -1.5]) {
      expect(isoFromMs(ms)).toBe(new Date(ms).toISOString());
    }
    expect(() => isoFromMs(Number.NaN)).toThrow(RangeError);
  });
});
