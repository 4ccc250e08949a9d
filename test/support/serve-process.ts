import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { inject } from "vitest";

const repoRoot = path.resolve(import.meta.dirname, "../..");

/** `flowlog serve` as its own process, as an operator runs it, so its memory can be read from /proc. */
export interface ServeProcess {
  url: string;
  /** Its probe port (FLOWLOG_PROBE_PORT, D46): /healthz, /readyz and /metrics without credentials. */
  probeUrl: string;
  pid: number;
  dataDir: string;
  /**
   * The task queue it starts executions on (FLOWLOG_TASK_QUEUE): its own unless `env` names one, so no
   * other test's worker on the shared Temporal runs them against another store. A worker for it polls this.
   */
  taskQueue: string;
  /** What it has written to stdout so far: its banner, and its JSON log lines. */
  output(): string;
  /** Resets the process's peak resident size (Linux clear_refs), so the next peak is what follows. */
  resetPeakMemory(): void;
  /** Resident and peak resident bytes, from /proc/<pid>/status. */
  memory(): { rss: number; peak: number };
  stop(): Promise<void>;
}

/** A fresh data dir unless `env` names one (FLOWLOG_DATA_DIR): a restart on the same data, with PORT the same port. */
export async function startServeProcess(env: Record<string, string> = {}): Promise<ServeProcess> {
  const dataDir = env.FLOWLOG_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), "flowlog-serve-"));
  const taskQueue = env.FLOWLOG_TASK_QUEUE ?? `serve-${randomUUID()}`;
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ["bin/flowlog.js", "serve"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PORT: "0",
      FLOWLOG_PROBE_PORT: "0",
      FLOWLOG_DATA_DIR: dataDir,
      FLOWLOG_LOG_LEVEL: "warn",
      TEMPORAL_ADDRESS: inject("temporalAddress"),
      TEMPORAL_NAMESPACE: inject("temporalNamespace"),
      FLOWLOG_TASK_QUEUE: taskQueue,
      ...env,
    },
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  let errors = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    errors += chunk;
  });
  const exited = once(child, "exit");
  const listening = () => /flowlog API at (http:\/\/\S+) /.exec(output);
  const probing = () => /Probes and metrics: (http:\/\/\S+) /.exec(output);
  while (!listening() || !probing()) {
    if (child.exitCode !== null) throw new Error(`flowlog serve exited: ${errors}`);
    await Promise.race([once(child.stdout, "data"), exited]);
  }
  const url = listening()?.[1] as string;
  const probeUrl = probing()?.[1] as string;
  const pid = child.pid as number;
  const status = () => readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status())?.[1]) * 1024;
  return {
    url,
    probeUrl,
    pid,
    dataDir,
    taskQueue,
    output: () => output,
    resetPeakMemory: () => writeFileSync(`/proc/${pid}/clear_refs`, "5"),
    memory: () => ({ rss: kib("VmRSS"), peak: kib("VmHWM") }),
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}
