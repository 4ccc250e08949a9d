import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from "@temporalio/worker";
import type { ExecutionRecord } from "../../src/store/records.js";
import { newId } from "../../src/util/ids.js";
import type { BenchStore } from "./store.js";

export const noopTaskQueue = "bench-noop";

/** The store the floor-with-log activity writes to, when the worker is started with `log`. */
let logStore: { bench: BenchStore; template: ExecutionRecord } | undefined;

export const noopActivities = {
  async noop(): Promise<string> {
    return "ok";
  },
  /** The execution bench's floor (issue 12): one GET of a loopback JSON API, its parsed answer. */
  async fetchJson(url: string): Promise<unknown> {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
    return response.json();
  },
  /**
   * The execution bench's floor with the log entry (issue 12): the same GET, then one log entry written
   * through flowlog's store as the worker writes one (D17), committed with its fsync (D23). Both in one
   * activity: the least a durable one-HTTP-block execution with its log can cost in Temporal.
   */
  async fetchAndLog(url: string): Promise<unknown> {
    if (!logStore) throw new Error("the no-op worker was started without `log`");
    const got = await noopActivities.fetchJson(url);
    const now = Date.now();
    const { entry, workflowState } = logStore.template;
    await logStore.bench.store.logs.insertExecution({
      entry: {
        ...entry,
        id: newId("log"),
        executionId: newId("ex"),
        startedAt: now - entry.totalDurationMs,
        endedAt: now,
      },
      workflowState,
    });
    return got;
  },
};

/**
 * A bench store of its own, and the smallest of 50 generated demo executions as the template of every
 * floor log entry. flowlog's store and seed are loaded only here, so the baseline's worker carries none
 * of flowlog's code.
 */
async function openLogStore(): Promise<{ bench: BenchStore; template: ExecutionRecord }> {
  const { demoExecutions, openBenchStore } = await import("./store.js");
  const bench = await openBenchStore();
  const [template] = (await demoExecutions(bench, 50, "bench:floor")).sort(
    (a, b) => a.entry.traceSpans.length - b.entry.traceSpans.length,
  );
  if (!template) throw new Error("the demo workflows generated no execution");
  return { bench, template };
}

let bundled: Promise<string> | undefined;

/**
 * The no-op workflows bundled for Temporal's sandbox once per bench run, in a temp file that every no-op
 * worker of the run loads (deleted when the run ends): webpack took about 2 s of each worker's start, and the
 * execution bench starts six.
 */
export function noopWorkflowBundle(): Promise<string> {
  bundled ??= (async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-noop-bundle-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const { code } = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL("./noop-workflow.ts", import.meta.url)),
      // The bundler's info lines (sizes) would land among the bench's tables.
      logger: new DefaultLogger("WARN"),
    });
    const file = path.join(dir, "noop-workflow-bundle.js");
    writeFileSync(file, code);
    return file;
  })();
  return bundled;
}

/**
 * The baseline's worker, in a process of its own like `flowlog worker`, on the run's bundle:
 *
 *     node --import tsx bench/support/noop-worker.ts <temporal address> <workflow bundle> [log]
 *
 * With `log`, its `fetchAndLog` activity writes to a bench store of its own, deleted when it stops.
 */
async function main(address: string, bundle: string, log: boolean): Promise<void> {
  if (log) logStore = await openLogStore();
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue: noopTaskQueue,
    workflowBundle: { codePath: bundle },
    activities: noopActivities,
  });
  process.once("SIGTERM", () => worker.shutdown());
  const running = worker.run();
  console.log(`noop worker polling ${noopTaskQueue}`);
  await running;
  await connection.close();
  await logStore?.bench.dispose();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [address, bundle, log] = process.argv.slice(2);
  if (!address || !bundle)
    throw new Error("usage: noop-worker.ts <temporal address> <workflow bundle> [log]");
  await main(address, bundle, log === "log");
}
