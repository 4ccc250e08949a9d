import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { StatsSlots } from "../src/limits/stats-slots.js";

/**
 * D46: GetLogStats allows 2 calls at once per user and 4 per process, and refuses beyond with 429 and
 * Retry-After instead of queueing, so one tenant's burst cannot make the others wait behind it.
 */
describe("stats calls at once (D46)", () => {
  /** A read that runs until the test ends it. */
  function held() {
    let end: () => void = () => undefined;
    const read = () => new Promise<string>((resolve) => (end = () => resolve("read")));
    return { read, end: () => end() };
  }

  async function refusalOf(promise: Promise<unknown>): Promise<ConnectError | undefined> {
    return promise.then(
      () => undefined,
      (error: unknown) => ConnectError.from(error),
    );
  }

  it("refuses a user's third call while two run, with resource_exhausted and Retry-After, and admits another user", async () => {
    const slots = new StatsSlots({ statsPerUser: 2, statsPerProcess: 4 });
    const [first, second] = [held(), held()];
    const running = [slots.run("alice", first.read), slots.run("alice", second.read)];
    const refused = await refusalOf(slots.run("alice", async () => "read"));
    expect(refused?.code).toBe(Code.ResourceExhausted);
    expect(refused?.metadata.get("retry-after")).toMatch(/^\d+$/);
    expect(refused?.rawMessage).toContain("at most 2 stats calls of one user");
    expect(await slots.run("bob", async () => "bob's")).toBe("bob's");
    first.end();
    second.end();
    expect(await Promise.all(running)).toEqual(["read", "read"]);
  });

  it("refuses the process's fifth call while four run, whoever makes it", async () => {
    const slots = new StatsSlots({ statsPerUser: 2, statsPerProcess: 4 });
    const reads = [held(), held(), held(), held()];
    const running = reads.map((read, i) => slots.run(`user-${i}`, read.read));
    const refused = await refusalOf(slots.run("user-9", async () => "read"));
    expect(refused?.code).toBe(Code.ResourceExhausted);
    expect(refused?.rawMessage).toContain("at most 4 stats calls run at once on this server");
    for (const read of reads) read.end();
    await Promise.all(running);
  });

  it("gives a slot back when its call ends, answered or failed", async () => {
    const slots = new StatsSlots({ statsPerUser: 1, statsPerProcess: 1 });
    await slots.run("alice", async () => "read");
    await expect(
      slots.run("alice", async () => Promise.reject(new Error("the read failed"))),
    ).rejects.toThrow("the read failed");
    expect(await slots.run("alice", async () => "again")).toBe("again");
  });
});
