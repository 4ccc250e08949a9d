import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Connection } from "@temporalio/client";
import { flowlogSearchAttributes } from "../search-attributes.js";
import { resolveTemporalCli } from "./cli-binary.js";

export interface TemporalDevServerOptions {
  /** Holds `temporal.sqlite`, so executions survive a restart of `flowlog dev` (D3). */
  dataDir: string;
  /**
   * `file` (the default) keeps Temporal's state in `temporal.sqlite`, so in-flight executions and
   * deliveries survive a restart; `memory` keeps it in memory only, faster under load and gone at exit
   * (FLOWLOG_TEMPORAL_DEV_DB, issue 12).
   */
  persistence?: "file" | "memory";
  namespace: string;
  /** Frontend gRPC port; 7233 by default. */
  port?: number;
  /** Web UI port; 8233 by default (D3). */
  uiPort?: number;
  headless?: boolean;
  startTimeoutMs?: number;
  /**
   * Dynamic config values of Temporal's server, over the ones set here (`--dynamic-config-value`, each
   * value written as JSON). For a test that needs the server to behave as a production one configured so
   * would: a low `limit.historyCount.suggestContinueAsNew`, say, to see workflows continue as new.
   */
  dynamicConfig?: Record<string, string | number | boolean>;
}

export interface TemporalDevServer {
  /** host:port of the frontend, for Connection and NativeConnection. */
  address: string;
  /** Undefined when headless. */
  uiUrl: string | undefined;
  stop(): Promise<void>;
}

const STOP_GRACE_MS = 10_000;

/** Starts `temporal server start-dev` as a child process and resolves once its frontend serves the namespace. */
export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const cli = await resolveTemporalCli();
  await mkdir(options.dataDir, { recursive: true });
  const port = options.port ?? 7233;
  const address = `127.0.0.1:${port}`;
  await assertPortsFree(options.headless ? [port] : [port, options.uiPort ?? 8233]);
  const server = new ServerProcess(spawn(cli, devServerArgs(options, port), serverSpawnOptions));
  try {
    await waitUntilServing(address, options.namespace, server, options.startTimeoutMs ?? 60_000);
  } catch (error) {
    await server.stop();
    throw error;
  }
  const uiUrl = options.headless ? undefined : `http://localhost:${options.uiPort ?? 8233}`;
  return { address, uiUrl, stop: () => server.stop() };
}

/**
 * Its own process group, so a Ctrl-C in the terminal reaches only flowlog, which then stops the worker
 * before the server it polls (D3: all three stop cleanly). A crash of flowlog still ends it (`killOnExit`).
 */
const serverSpawnOptions: SpawnOptions = { stdio: ["ignore", "pipe", "pipe"], detached: true };

/** The server's dynamic config, as flowlog runs it. */
const dynamicConfig: Record<string, string | number | boolean> = {
  // Task queues dispatch by fairness key, which each execution sets to its workspace (start-execution.ts),
  // so one tenant's backlog does not hold another's tasks behind it (issue 11).
  "matching.enableFairness": true,
  // The history service reads the tasks it hands to matching (a workflow task to run, an activity to
  // dispatch) at most this often per shard, and the dev server has one shard: the default, 20 reads a
  // second, held every task up to 50 ms (35-45 ms each at p50) and capped the whole server's hand-offs.
  // A read happens only when a task was written, so a higher rate costs nothing when idle (issue 12;
  // bench/README.md has the measurements).
  "history.transferProcessorMaxPollRPS": 1000,
  "history.timerProcessorMaxPollRPS": 1000,
  // A workflow task that schedules activities gets them back in its completion's answer when the worker
  // has free slots, skipping one round trip through matching per activity.
  "system.enableActivityEagerExecution": true,
};

function devServerArgs(options: TemporalDevServerOptions, port: number): string[] {
  return [
    "server",
    "start-dev",
    ["--ip", "127.0.0.1"],
    ["--port", String(port)],
    options.persistence === "memory"
      ? []
      : [
          ["--db-filename", path.join(options.dataDir, "temporal.sqlite")],
          // WAL without an fsync per commit: state survives any restart or crash of the process (the WAL is
          // in the OS's cache), and only a power cut can lose its last moments. Every task the server hands
          // over is a commit: with the SQLite default (a rollback journal synced at each commit) a no-op
          // workflow took 70 ms at p50 instead of 45 (issue 12, bench/README.md).
          ["--sqlite-pragma", "journal_mode=wal"],
          ["--sqlite-pragma", "synchronous=normal"],
        ],
    // warn would print a screenful of poll errors on every shutdown; errors land in the start failure message.
    ["--log-level", "error"],
    Object.entries({ ...dynamicConfig, ...options.dynamicConfig }).map(([key, value]) => [
      "--dynamic-config-value",
      `${key}=${JSON.stringify(value)}`,
    ]),
    options.headless ? ["--headless"] : ["--ui-port", String(options.uiPort ?? 8233)],
    options.namespace === "default" ? [] : ["--namespace", options.namespace],
    // Registered with the namespace on a fresh database; registerSearchAttributes covers existing ones.
    // The CLI matches type names case-insensitively without underscores (KEYWORD_LIST -> KeywordList).
    Object.values(flowlogSearchAttributes).map((key) => [
      "--search-attribute",
      `${key.name}=${key.type.replaceAll("_", "")}`,
    ]),
  ].flat(2);
}

/**
 * The readiness probe cannot tell our child from another server already on the port (it would answer and
 * our child would die of "address already in use"), so a busy port fails here, with the way out.
 */
async function assertPortsFree(ports: number[]): Promise<void> {
  for (const port of ports) {
    if (!(await isPortFree(port))) {
      throw new Error(
        `cannot start the Temporal dev server: 127.0.0.1:${port} is already in use. Stop whatever listens ` +
          `there, or, if it is a Temporal server, set TEMPORAL_ADDRESS=127.0.0.1:${port} to use it.`,
      );
    }
  }
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
      .once("error", () => resolve(false))
      .listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

async function waitUntilServing(
  address: string,
  namespace: string,
  server: ServerProcess,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.exitReason) {
      throw new Error(
        `Temporal dev server stopped while starting (${server.exitReason})${server.outputTail()}`,
      );
    }
    if (await servesNamespace(address, namespace)) return;
    if (Date.now() > deadline) {
      throw new Error(
        `Temporal dev server did not answer on ${address} within ${timeoutMs} ms${server.outputTail()}`,
      );
    }
    await sleep(250);
  }
}

async function servesNamespace(address: string, namespace: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 1_000 });
    const rpc = connection.workflowService;
    await connection.withDeadline(Date.now() + 2_000, () => rpc.describeNamespace({ namespace }));
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close();
  }
}

/** The running child: its exit, the tail of its output for error messages, and a graceful stop. */
class ServerProcess {
  exitReason: string | undefined;
  private readonly exited: Promise<void>;
  private head = "";
  private output = "";
  private dropped = false;
  private readonly killOnExit = () => this.child.kill("SIGKILL");

  constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve(this.markExited(signal ?? `exit code ${code}`)));
      child.once("error", (error) => resolve(this.markExited(error.message)));
    });
    child.stdout?.on("data", (chunk: Buffer) => this.keep(chunk));
    child.stderr?.on("data", (chunk: Buffer) => this.keep(chunk));
    process.on("exit", this.killOnExit);
  }

  /** The start and the end of what it printed: a Go panic names its cause at the top. */
  outputTail(): string {
    const head = this.head.trim();
    const tail = this.output.trim();
    if (!head) return "";
    return this.dropped
      ? `; its output began:\n${head}\n...\nand ended:\n${tail}`
      : `; its output:\n${(this.head + this.output).trim()}`;
  }

  async stop(): Promise<void> {
    if (this.exitReason) return;
    this.child.kill("SIGTERM");
    const timedOut = await Promise.race([
      this.exited.then(() => false),
      sleep(STOP_GRACE_MS, true, { ref: false }),
    ]);
    if (timedOut) this.child.kill("SIGKILL");
    await this.exited;
  }

  private markExited(reason: string): void {
    this.exitReason = reason;
    process.off("exit", this.killOnExit);
  }

  private keep(chunk: Buffer): void {
    let text = chunk.toString("utf8");
    const room = 2_000 - this.head.length;
    if (room > 0) {
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    const combined = this.output + text;
    this.dropped ||= combined.length > 4_000;
    this.output = combined.slice(-4_000);
  }
}
