import { spawn } from "node:child_process";
import { closeSync, existsSync, readFileSync, writeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { statFields } from "../util/proc-stat.js";
import { openAppendSync } from "./cluster-dir.js";

/**
 * A process `flowlog cluster up` started and left running: enough to find it again from another command
 * (`down`, `status`) and to be sure it is still ours before signalling it.
 */
export interface ClusterProcess {
  /** Its role in the cluster, and the name of its log file (`logs/<name>.log`). */
  name: string;
  pid: number;
  /**
   * When it started, in clock ticks since boot (`/proc/<pid>/stat`): with the pid it names one process
   * until the machine restarts, so a pid the system reused for another program is never signalled.
   * Missing in state written before it was recorded, and where there is no `/proc`.
   */
  startTime?: string;
  /** Its command line as launched: what tells it from another program where the start time is missing. */
  commandLine: string;
  /** How it is asked to stop at once but cleanly: postgres's fast shutdown is SIGINT, the others SIGTERM. */
  stopSignal: NodeJS.Signals;
  /** `/readyz` (or another page that answers 200 when it serves), for `status`. */
  probeUrl?: string;
}

export interface LaunchOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  stopSignal?: NodeJS.Signals;
  probeUrl?: string;
}

/**
 * Starts `program` detached from this process, in a session of its own, with its output appended to its
 * log file: it outlives the command that started it, and a Ctrl-C in that terminal does not reach it.
 */
export function launch(
  logsDir: string,
  name: string,
  [program, args]: [string, string[]],
  options: LaunchOptions = {},
): ClusterProcess {
  const log = openAppendSync(logFile(logsDir, name));
  try {
    const child = spawn(program, args, {
      detached: true,
      stdio: ["ignore", log, log],
      env: options.env ?? process.env,
      cwd: options.cwd,
    });
    // A program that cannot be started is reported by waitUntil, which finds it gone.
    child.on("error", () => undefined);
    child.unref();
    if (child.pid === undefined) throw new Error(`${name} (${program}) could not be started`);
    return {
      name,
      pid: child.pid,
      // Read at once: until this process reaps the child, the pid cannot name another.
      startTime: readStat(child.pid)?.startTime,
      commandLine: [program, ...args].join(" "),
      stopSignal: options.stopSignal ?? "SIGTERM",
      probeUrl: options.probeUrl,
    };
  } finally {
    closeSync(log);
  }
}

export function logFile(logsDir: string, name: string): string {
  return path.join(logsDir, `${name}.log`);
}

/** Appends what a tool run to its end said to its log. */
export function appendToLog(logsDir: string, name: string, text: string): void {
  const log = openAppendSync(logFile(logsDir, name));
  try {
    writeSync(log, text);
  } finally {
    closeSync(log);
  }
}

/**
 * Refuses a recorded pid that is not a positive whole number: kill(2) reads 0 as this process group and
 * -1 as every process it may signal, so a state file saying so would make `down` stop them all.
 */
export function checkPid(process_: ClusterProcess): void {
  const { pid } = process_ as { pid: unknown };
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) {
    throw new Error(
      `${String(process_.name)} is recorded with pid ${JSON.stringify(pid)}, not a positive whole number: ` +
        "refusing to signal it",
    );
  }
}

/**
 * Whether the process still runs and is the one recorded, not another that got its pid. Its start time
 * says so; its command line does not: nginx rewrites its own as it starts (`nginx: master process ...`),
 * and a read in the middle of that rewrite matched neither form, so a healthy nginx was taken for one
 * that stopped while starting.
 */
export async function isRunning(process_: ClusterProcess): Promise<boolean> {
  checkPid(process_);
  try {
    process.kill(process_.pid, 0);
  } catch {
    return false;
  }
  const stat = readStat(process_.pid);
  // Without /proc (not Linux) the signal check is all there is; with it, no stat means it just exited.
  if (stat === undefined) return !existsSync("/proc/self/stat");
  // A zombie has exited; only its parent's wait is missing.
  if (stat.state === "Z") return false;
  if (process_.startTime !== undefined) return stat.startTime === process_.startTime;
  // State from before start times were recorded. Through setpriv the recorded line ends with the
  // program's own; nginx's master prefixes its title.
  const commandLine = await readFile(`/proc/${process_.pid}/cmdline`, "utf8").catch(() => "");
  const actual = commandLine.split("\0").join(" ").trim();
  return (
    actual.length > 0 && (process_.commandLine.endsWith(actual) || actual.endsWith(process_.commandLine))
  );
}

/**
 * A running process kept from an earlier `up`, with its start time: one recorded before start times were
 * (its command line checked by `isRunning`) is known by its start time from now on, once the state file
 * is written again.
 */
export function withStartTime(process_: ClusterProcess): ClusterProcess {
  if (process_.startTime !== undefined) return process_;
  const startTime = readStat(process_.pid)?.startTime;
  return startTime === undefined ? process_ : { ...process_, startTime };
}

/** Its state letter and start time from `/proc/<pid>/stat`; undefined when there is none. */
function readStat(pid: number): { state: string; startTime: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // proc(5)'s field 3 is the state, field 22 the start time.
  const fields = statFields(text);
  return { state: fields[0] as string, startTime: fields[19] as string };
}

/** Asks it to stop, and kills it if it has not within `graceMs`. False when it was not running. */
export async function stopProcess(process_: ClusterProcess, graceMs = 20_000): Promise<boolean> {
  if (!(await isRunning(process_))) return false;
  process.kill(process_.pid, process_.stopSignal);
  const deadline = Date.now() + graceMs;
  while (await isRunning(process_)) {
    if (Date.now() > deadline) {
      process.kill(process_.pid, "SIGKILL");
      break;
    }
    await sleep(100);
  }
  return true;
}

/**
 * Waits until `ready` answers true, polling; fails early, with the end of its log, when the process is
 * gone, and after `timeoutMs` otherwise.
 */
export async function waitUntil(
  logsDir: string,
  process_: ClusterProcess,
  ready: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready().catch(() => false)) return;
    if (!(await isRunning(process_))) {
      throw new Error(`${process_.name} stopped while starting${logTail(logsDir, process_.name)}`);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${process_.name} was not ready within ${timeoutMs / 1000} s${logTail(logsDir, process_.name)}`,
      );
    }
    await sleep(250);
  }
}

/** The last lines of its log, for an error message. */
export function logTail(logsDir: string, name: string, lines = 15): string {
  try {
    const text = readFileSync(logFile(logsDir, name), "utf8")
      .trimEnd()
      .split("\n")
      .slice(-lines)
      // Go servers log JSON lines with whole stack traces: the start of each says what happened.
      .map((line) => (line.length > 400 ? `${line.slice(0, 400)}...` : line))
      .join("\n");
    return text ? `; the end of ${logFile(logsDir, name)}:\n${text}` : "";
  } catch {
    return "";
  }
}

/** 200 from `url` within two seconds. */
export async function answers200(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  await response.body?.cancel();
  return response.status === 200;
}
