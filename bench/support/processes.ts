import { type ChildProcess, execFile, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const flowlogBin = path.join(repoRoot, "bin", "flowlog.js");

/** Runs one `flowlog` command as a user would and returns what it printed on stdout. */
export async function flowlogCli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [flowlogBin, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/**
 * FLOWLOG_PLAN_LIMITS for the benches: the enterprise plan's API and execution buckets too large to empty,
 * so a bench measures the work and not the plan's refusals; every call still takes its token.
 */
const unlimited = { requestsPerMinute: 1_000_000_000, maxBurst: 1_000_000_000 };
export const unlimitedPlanLimits = JSON.stringify({
  enterprise: { api: unlimited, syncExecutions: unlimited, asyncExecutions: unlimited },
});

/** `flowlog bootstrap --json --plan enterprise` in the data dir `env` names: a workspace and its key. */
export async function bootstrapAccount(
  env: NodeJS.ProcessEnv,
): Promise<{ workspaceId: string; key: string }> {
  const printed = JSON.parse(await flowlogCli(["bootstrap", "--json", "--plan", "enterprise"], env)) as {
    workspace: { id: string };
    key: string;
  };
  return { workspaceId: printed.workspace.id, key: printed.key };
}

export interface RunningProcess {
  /** The first match of the ready pattern in its output. */
  ready: RegExpMatchArray;
  pid: number;
  /** All it wrote to stdout and stderr so far (V8's GC traces too, when its arguments ask for them). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts a long-running child (a server under load) in a process of its own, so the load generator
 * and the server under test never share an event loop, and waits for `ready` in its output.
 */
export function startProcess(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; ready: RegExp; timeoutMs?: number },
): Promise<RunningProcess> {
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${path.basename(args[0] ?? command)} did not start:\n${output.slice(-2000)}`));
    }, options.timeoutMs ?? 60_000);
    let started = false;
    // Read to the end, so a child that writes a lot never blocks on a full pipe.
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const ready = !started && output.match(options.ready);
      if (!ready) return;
      started = true;
      clearTimeout(timer);
      resolve({ ready, pid: child.pid ?? 0, output: () => output, stop: () => stopChild(child) });
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${args[0] ?? command} exited (${signal ?? code}) before it was ready:\n${output}`));
    });
  });
}

/**
 * Processes started side by side, answered in the order given: a start is mostly loading modules and
 * connecting, so two together take little more than the longer one. If one fails to start, the others
 * are stopped before its error is thrown.
 */
export async function startTogether<T extends readonly Promise<RunningProcess>[]>(
  starts: T,
): Promise<{ -readonly [K in keyof T]: RunningProcess }> {
  const settled = await Promise.allSettled(starts);
  const started = settled.flatMap((start) => (start.status === "fulfilled" ? [start.value] : []));
  const failed = settled.find((start) => start.status === "rejected");
  if (failed) {
    await Promise.all(started.map((child) => child.stop()));
    throw failed.reason;
  }
  return started as { -readonly [K in keyof T]: RunningProcess };
}

/** `node <repo>/bin/flowlog.js <args>` in a process of its own. */
export function startFlowlog(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; ready: RegExp; timeoutMs?: number },
): Promise<RunningProcess> {
  return startProcess(process.execPath, [flowlogBin, ...args], options);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
