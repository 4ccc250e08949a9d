import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client, Connection, type WorkflowHandle, WorkflowNotFoundError } from "@temporalio/client";
import type { ExecutionInput, ExecutionResult } from "../../src/engine/execution-types.js";
import type { WorkflowStateJson } from "../../src/engine/json-shapes.js";
import { defaultPlanLimits } from "../../src/limits/plans.js";
import type { DeliveryRecord } from "../../src/store/delivery-rows.js";
import type { ExecutionRecord } from "../../src/store/records.js";
import { openStore, type Store } from "../../src/store/store.js";
import type { NotificationSettings } from "../../src/temporal/activities/deps.js";
import type { ActivityDeps } from "../../src/temporal/activities/index.js";
import { fanOutWorkflowId } from "../../src/temporal/delivery-ids.js";
import { type ExecutionHandle, startExecution } from "../../src/temporal/start-execution.js";
import {
  createFlowlogWorker,
  type FlowlogWorker,
  type FlowlogWorkerOptions,
} from "../../src/temporal/worker.js";
import { newId } from "../../src/util/ids.js";
import { createAccount, type TestAccount } from "./flowlog.js";
import { testWorkflowBundlePath } from "./test-workflow-bundle.js";
import { until } from "./until.js";

/** Short enough that a killed worker's block moves on within seconds, long enough for a loaded machine. */
export const testTimeouts = { heartbeatMs: 2_000, retryInitialMs: 100, retryMaxMs: 500 };

export interface RunningWorker {
  taskQueue: string;
  stop(): Promise<void>;
}

/** What a test's worker runs with: its store, loopback receivers allowed (D22), D12's plan table. */
export function testDeps(store: Store, extra: Partial<ActivityDeps> = {}): ActivityDeps {
  return { store, allowPrivateNetworks: true, planLimits: defaultPlanLimits, ...extra };
}

/**
 * The same for a worker that notifies: links in messages to http://flowlog.test, e-mail off unless
 * `notifications` names an SMTP server, and whatever else of the notification settings a test sets
 * (D19's delay scale, D21's hour, D35's auto-disable, D36's hold).
 */
export function notifyingDeps(
  store: Store,
  notifications: Partial<NotificationSettings> = {},
  extra: Partial<ActivityDeps> = {},
): ActivityDeps {
  return testDeps(store, {
    notifications: {
      publicBaseUrl: "http://flowlog.test",
      smtpUrl: undefined,
      mailFrom: "flowlog <flowlog@test>",
      ...notifications,
    },
    ...extra,
  });
}

/**
 * A real worker in this process on its own task queue, so test files never take each other's tasks; both
 * roles unless `options` name one (issue 51).
 */
export async function startWorker(
  temporal: { address: string; namespace: string },
  deps: ActivityDeps,
  taskQueue = `engine-${randomUUID()}`,
  options: Pick<
    FlowlogWorkerOptions,
    "roles" | "deliveriesPerSecond" | "retentionScheduleId" | "shutdownGraceMs"
  > = {},
): Promise<RunningWorker> {
  const worker: FlowlogWorker = await createFlowlogWorker({
    ...temporal,
    ...options,
    taskQueue,
    deps,
    // The build's workflows with the tests' interceptors, bundled once by the test set-up: bundling in every
    // worker a test file starts cost about 2 s of CPU each.
    workflowBundle: { codePath: testWorkflowBundlePath },
  });
  const running = worker.run();
  return {
    taskQueue,
    stop: async () => {
      worker.shutdown();
      await running;
    },
  };
}

/**
 * The notification fan-out of a log entry, once the worker's outbox has started it: that happens beside
 * the execution, not before its result (issue 12), so a test that holds the result waits for it here.
 */
export async function startedFanOut(
  client: Client,
  logId: string,
  timeoutMs = 15_000,
): Promise<WorkflowHandle> {
  const handle = client.workflow.getHandle(fanOutWorkflowId(logId));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await handle.describe();
      return handle;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError) || Date.now() > deadline) throw error;
      await sleep(20);
    }
  }
}

/**
 * How many deliveries the entry's notifications made, once each has been attempted to its end. The
 * worker's outbox makes them and starts their fan-out only when there is one (issue 12), so this waits
 * for the outbox to let go of the entry first; an entry it let go of with no fan-out made none.
 */
export async function fanOutDeliveries(
  client: Client,
  store: Store,
  logId: string,
  timeoutMs = 15_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (await store.outbox.holds(logId)) {
    if (Date.now() > deadline) throw new Error(`the outbox still holds ${logId} after ${timeoutMs} ms`);
    await sleep(20);
  }
  try {
    return await client.workflow.getHandle(fanOutWorkflowId(logId)).result();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 0;
    throw error;
  }
}

/**
 * Version 1 of the account's workflow run to its end, as the worker runs a trigger's execution (billed
 * to the account's user, with the tests' short activity timeouts): its result.
 */
export async function runToEnd(
  client: Client,
  account: Pick<TestAccount, "workspaceId" | "userId">,
  workflowId: string,
  options: { taskQueue: string; trigger?: ExecutionInput["trigger"] },
): Promise<ExecutionResult> {
  const handle = await startExecution(
    client,
    {
      workspaceId: account.workspaceId,
      workflowId,
      version: 1,
      trigger: options.trigger ?? "manual",
      input: {},
      billedUserId: account.userId,
      timeouts: testTimeouts,
    },
    { taskQueue: options.taskQueue },
  );
  return handle.result();
}

/** The subscription's deliveries that have settled (succeeded or failed), once there are `count`. */
export function settledDeliveries(
  store: Store,
  workspaceId: string,
  subscriptionId: string,
  count = 1,
): Promise<DeliveryRecord[]> {
  return until(`${count} settled deliveries for ${subscriptionId}`, async () => {
    const settled = (await store.deliveries.list({ workspaceId, subscriptionId }, 1000)).filter(
      (delivery) => delivery.status !== "pending",
    );
    return settled.length >= count ? settled : undefined;
  });
}

/** A workspace on a fresh SQLite store, its workflows, and executions started through startExecution. */
export class EngineHarness {
  private constructor(
    readonly dataDir: string,
    readonly store: Store,
    readonly account: TestAccount,
    readonly folderId: string,
    readonly connection: Connection,
    readonly client: Client,
    private readonly workflowTaskTimeoutMs: number | undefined,
  ) {}

  /** `workflowTaskTimeoutMs` on every execution it starts (startExecution), for files that kill workers. */
  static async connect(
    temporal: { address: string; namespace: string },
    { workflowTaskTimeoutMs }: { workflowTaskTimeoutMs?: number } = {},
  ): Promise<EngineHarness> {
    const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-engine-"));
    const store = openStore({ dataDir });
    const account = await createAccount(store);
    const folderId = newId("fld");
    await store.workflows.createFolder({
      id: folderId,
      workspaceId: account.workspaceId,
      name: "Tests",
      createdAt: Date.now(),
    });
    const connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: temporal.namespace });
    return new EngineHarness(dataDir, store, account, folderId, connection, client, workflowTaskTimeoutMs);
  }

  /** Saves a workflow (version 1) in the harness's folder; returns its id. */
  async saveWorkflow(state: Partial<WorkflowStateJson>, name = "Engine test"): Promise<string> {
    const id = newId("wf");
    const now = Date.now();
    await this.store.workflows.createWorkflow({
      id,
      workspaceId: this.account.workspaceId,
      folderId: this.folderId,
      name,
      description: "",
      version: 1,
      state: { blocks: {}, edges: [], loops: {}, parallels: {}, ...state },
      createdAt: now,
      updatedAt: now,
    });
    return id;
  }

  start(
    taskQueue: string,
    workflowId: string,
    input: ExecutionInput["input"] = {},
    extra: Partial<ExecutionInput> = {},
  ): Promise<ExecutionHandle> {
    return startExecution(
      this.client,
      {
        workspaceId: this.account.workspaceId,
        workflowId,
        version: 1,
        trigger: "manual",
        input,
        billedUserId: this.account.userId,
        timeouts: testTimeouts,
        ...extra,
      },
      { taskQueue, workflowTaskTimeoutMs: this.workflowTaskTimeoutMs },
    );
  }

  /** Runs an execution to its end and reads back what it logged. */
  async run(
    taskQueue: string,
    workflowId: string,
    input: ExecutionInput["input"] = {},
    extra: Partial<ExecutionInput> = {},
  ): Promise<{ result: ExecutionResult; logged: ExecutionRecord }> {
    const result = await (await this.start(taskQueue, workflowId, input, extra)).result();
    return { result, logged: await this.logged(result) };
  }

  /** The entry with its trace spans and final output, and the snapshot, as the logs API reads them. */
  async logged({ executionId, logId }: ExecutionResult): Promise<ExecutionRecord> {
    const entry = await this.store.logs.getEntry(logId);
    const execution = await this.store.logs.getExecution(executionId);
    if (!entry || execution?.entry.id !== logId) throw new Error(`no log entry ${logId} for ${executionId}`);
    return { entry, workflowState: execution.workflowState };
  }

  /** Log entries of one execution, by the same query the logs API runs. */
  async entriesOf(executionId: string) {
    const page = await this.store.logs.list(
      { workspaceId: this.account.workspaceId, executionId },
      { order: "asc", limit: 10, withCostDetail: false, withTraceSpans: false, withFinalOutput: false },
    );
    return page.entries;
  }

  async close(): Promise<void> {
    await this.connection.close();
    await this.store.close();
  }
}

const workerScript = path.join(import.meta.dirname, "engine-worker-process.ts");

/**
 * A flowlog worker in a process of its own (engine-worker-process.ts) on `taskQueue`, over the store in
 * `dataDir`, with `env` over the test's environment (a store's connection, an injected clock): resolves
 * once it polls, so a test can SIGKILL it mid-work.
 */
export async function spawnWorkerProcess(
  temporal: { address: string; namespace: string },
  taskQueue: string,
  dataDir: string,
  env: Record<string, string | undefined> = {},
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", workerScript, temporal.address, temporal.namespace, taskQueue, dataDir],
    { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...env } },
  );
  let output = "";
  for await (const chunk of child.stdout ?? []) {
    output += String(chunk);
    if (output.includes("ready")) return child;
  }
  throw new Error(`the worker process exited before it was ready: ${output}`);
}
