import { fileURLToPath } from "node:url";
import { NativeConnection, Worker } from "@temporalio/worker";
import type { ExecutionRecord } from "../../src/store/records.js";
import type { Store } from "../../src/store/store.js";
import { newId } from "../../src/util/ids.js";

export const noopTaskQueue = "bench-noop";

/** The log store the floor-with-log activity writes to, when the worker is given a data dir. */
let logStore: { store: Store; template: ExecutionRecord } | undefined;

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
    if (!logStore) throw new Error("the no-op worker was started without a data dir for its log");
    const got = await noopActivities.fetchJson(url);
    const now = Date.now();
    const { entry, workflowState } = logStore.template;
    await logStore.store.logs.insertExecution({
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
 * A store in `dataDir` with a workspace of the demo workflows, and the smallest generated log entry of
 * theirs as the template of every floor log entry. flowlog's store and seed are loaded only here, so the
 * baseline's worker carries none of flowlog's code.
 */
async function openLogStore(dataDir: string): Promise<{ store: Store; template: ExecutionRecord }> {
  const [{ generateExecutions }, { Random }, { seedWorkspace }, { openStore }] = await Promise.all([
    import("../../src/seed/generate.js"),
    import("../../src/seed/random.js"),
    import("../../src/seed/seed.js"),
    import("../../src/store/store.js"),
  ]);
  const store = openStore({ dataDir });
  const now = Date.now();
  const user = { id: newId("usr"), email: "floor@example.test", plan: "enterprise" as const, createdAt: now };
  const workspaceId = newId("ws");
  await store.accounts.createUser(user);
  await store.accounts.createWorkspace({ id: workspaceId, name: "floor", createdAt: now }, [user.id]);
  await seedWorkspace(store, { workspaceId, executions: 0, seed: "floor" });
  const workflows = await store.workflows.listWorkflows(workspaceId);
  let template: ExecutionRecord | undefined;
  const request = { workflows, count: 50, days: 1, now, billedUserId: user.id };
  for await (const record of generateExecutions(new Random("bench:floor"), request)) {
    if (!template || record.entry.traceSpans.length < template.entry.traceSpans.length) template = record;
  }
  if (!template) throw new Error("the demo workflows generated no execution");
  return { store, template };
}

/**
 * The baseline's worker, in a process of its own like `flowlog worker`:
 *
 *     node --import tsx bench/support/noop-worker.ts <temporal address> [<data dir for fetchAndLog>]
 */
async function main(address: string, dataDir: string | undefined): Promise<void> {
  if (dataDir) logStore = await openLogStore(dataDir);
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue: noopTaskQueue,
    workflowsPath: fileURLToPath(new URL("./noop-workflow.ts", import.meta.url)),
    activities: noopActivities,
  });
  process.once("SIGTERM", () => worker.shutdown());
  const running = worker.run();
  console.log(`noop worker polling ${noopTaskQueue}`);
  await running;
  await connection.close();
  await logStore?.store.close();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await main(process.argv[2] ?? "localhost:7233", process.argv[3]);
}
