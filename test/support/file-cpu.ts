import { appendFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, inject } from "vitest";
import { cpuSecondsOf } from "../../src/util/proc-stat.js";

/*
 * FLOWLOG_TEST_CPU=<file>: each test file's CPU time, appended to <file> as one JSON line when it ends
 * (issue 50: the suite is bound by CPU on two cores, so what to trim is read in CPU-seconds, not in
 * wall time, which files running side by side share). It counts the vitest worker's process while the
 * file runs and the processes it started and reaped (flowlog serve and worker processes, SMTP servers,
 * Chromium); the run's Temporal and PostgreSQL servers, shared by every file, are not in it. A setup file:
 * vitest runs it before each test file.
 */
const out = process.env.FLOWLOG_TEST_CPU;
if (out) {
  let started = 0;
  beforeAll(() => {
    started = cpuSeconds();
  });
  afterAll(() => {
    const file = path.relative(process.cwd(), expect.getState().testPath ?? "");
    const line = { file, project: inject("storeKind"), cpuSeconds: +(cpuSeconds() - started).toFixed(1) };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}

/** This process's user and system time with that of its reaped children, from /proc. */
function cpuSeconds(): number {
  const { own, children } = cpuSecondsOf(readFileSync("/proc/self/stat", "utf8"));
  return own + children;
}
