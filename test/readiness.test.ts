import { describe, expect, it } from "vitest";
import { Readiness } from "../src/server/health.js";

/** D46: readiness is computed at most once a second and shared by every probe that asks meanwhile. */
describe("readiness is shared (D46)", () => {
  function counted(outcome: () => Promise<void>) {
    const calls = { count: 0 };
    const check = () => {
      calls.count++;
      return outcome();
    };
    return { calls, check: { name: "store", check } };
  }

  it("probes that arrive while the checks run wait for that one run", async () => {
    let finish: () => void = () => undefined;
    const { calls, check } = counted(() => new Promise<void>((resolve) => (finish = resolve)));
    const readiness = new Readiness([check]);
    const verdicts = Array.from({ length: 500 }, () => readiness.failed());
    finish();
    expect(await Promise.all(verdicts)).toEqual(Array.from({ length: 500 }, () => []));
    expect(calls.count).toBe(1);
  });

  it("a verdict answers for one second after it is known, then the checks run again", async () => {
    let now = 1_000_000;
    const { calls, check } = counted(() => Promise.reject(new Error("down")));
    const readiness = new Readiness([check], () => now);
    expect(await readiness.failed()).toEqual(["store"]);
    now += 999;
    expect(await readiness.failed()).toEqual(["store"]);
    expect(calls.count).toBe(1);
    now += 1;
    expect(await readiness.failed()).toEqual(["store"]);
    expect(calls.count).toBe(2);
  });
});
