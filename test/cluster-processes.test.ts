import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { isRunning, launch, stopProcess, withStartTime } from "../src/cluster/processes.js";

/**
 * `flowlog cluster` finds the processes it started by the pid it recorded, in this process and in later
 * commands (`status`, `down`, `up` again). It must know a process of its own whatever that process calls
 * itself (nginx rewrites its command line as it starts, and a read in the middle of that rewrite once
 * failed a cluster's start), and must never take another program that got the same pid for it.
 */
describe("cluster processes are known by pid and start time", () => {
  const logs = mkdtempSync(path.join(tmpdir(), "flowlog-processes-"));
  afterAll(() => rmSync(logs, { recursive: true, force: true }));

  // A program that names itself anew once started, as nginx's master does.
  const renaming = (): [string, string[]] => [
    process.execPath,
    ["-e", 'process.title = "renamed"; setInterval(() => {}, 1000);'],
  ];

  async function untilRenamed(pid: number): Promise<void> {
    for (let tries = 0; tries < 200; tries++) {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("renamed")) return;
      await sleep(25);
    }
    throw new Error(`process ${pid} never renamed itself`);
  }

  it("one that rewrote its command line is still running, and stopped once it is stopped", async () => {
    const started = launch(logs, "renaming", renaming());
    await untilRenamed(started.pid);
    expect(await isRunning(started)).toBe(true);
    // The state file round trip: what a later command reads back.
    expect(await isRunning(JSON.parse(JSON.stringify(started)))).toBe(true);
    expect(await stopProcess(started, 5_000)).toBe(true);
    expect(await isRunning(started)).toBe(false);
    expect(await stopProcess(started, 5_000)).toBe(false);
  });

  it("another process that has its pid is not taken for it", async () => {
    const started = launch(logs, "renaming", renaming());
    try {
      await untilRenamed(started.pid);
      // The same pid started at another time: the system reused the pid for something else.
      const earlier = { ...started, startTime: String(Number(started.startTime) - 1) };
      expect(await isRunning(earlier)).toBe(false);
      expect(await stopProcess(earlier, 5_000)).toBe(false);
      // Not signalled: the process that owns the pid runs on.
      expect(await isRunning(started)).toBe(true);
    } finally {
      await stopProcess(started, 5_000);
    }
  });

  it("one kept from a state file written before start times were recorded is known by its start time from then on", async () => {
    const started = launch(logs, "plain", [process.execPath, ["-e", "setInterval(() => {}, 1000);"]]);
    try {
      const { startTime, ...recordedBefore } = started;
      expect(startTime).toMatch(/^\d+$/);
      // Only the command line tells it is ours; kept, it takes the start time the next state file records.
      expect(await isRunning(recordedBefore)).toBe(true);
      const kept = withStartTime(recordedBefore);
      expect(kept.startTime).toBe(startTime);
      expect(await isRunning(JSON.parse(JSON.stringify(kept)))).toBe(true);
      // From then on the start time decides, whatever the command line says.
      expect(await isRunning({ ...kept, commandLine: "another program" })).toBe(true);
      expect(await isRunning({ ...kept, startTime: String(Number(startTime) - 1) })).toBe(false);
    } finally {
      await stopProcess(started, 5_000);
    }
  });

  it("a log planted as a link is refused, and what it leads to is left as it was (issue 49)", async () => {
    // As root, `up` would otherwise append a process's output to whatever file the link names.
    const target = path.join(logs, "not-a-log");
    writeFileSync(target, "untouched\n");
    symlinkSync(target, path.join(logs, "linked.log"));

    expect(() => launch(logs, "linked", [process.execPath, ["-e", 'console.log("appended")']])).toThrow(
      `${path.join(logs, "linked.log")} is a symbolic link: refused`,
    );
    await sleep(500);
    expect(readFileSync(target, "utf8")).toBe("untouched\n");
  });
});
