import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { Client, Connection, ScheduleNotFoundError } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WorkflowsService } from "../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { defaultQuotas } from "../src/limits/quotas.js";
import { ProcessMetrics } from "../src/logging/metrics.js";
import type { LogFilter } from "../src/store/log-list-sql.js";
import { inactivityWatchId } from "../src/temporal/inactivity-ids.js";
import { restWithKey } from "./support/api-server.js";
import { type RunningWorker, startWorker, testDeps } from "./support/engine.js";
import {
  createAccount,
  startFlowlog,
  steppingClock,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { type HttpReceiver, sendJson, startReceiver } from "./support/http-receiver.js";
import { fireSchedule } from "./support/schedules.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `lifecycle-${randomUUID()}`;
const cli = fileURLToPath(new URL("../bin/flowlog.js", import.meta.url));
/** How long the sync deadline suite's flowlog lets a sync caller wait (D26's syncExecutionDeadlineMs). */
const tinyDeadlineMs = 1_500;
/** The upstream holds a "slow" request this long: well past the tiny deadline, within the test's timeout. */
const slowMs = 5_000;
/** The "slow" requests the upstream holds: a test lets them go once it has checked what came first. */
const heldSlow = new Set<() => void>();
function releaseSlow(): void {
  for (const release of heldSlow) release();
  heldSlow.clear();
}

type Json = Record<string, unknown>;

let flowlog: TestFlowlog;
let hurried: TestFlowlog;
let worker: RunningWorker;
let hurriedWorker: RunningWorker;
let upstream: HttpReceiver;
let connection: Connection;
let temporal: Client;
let alice: TestAccount;

beforeAll(async () => {
  // The upstream the api block calls: it echoes the message, after slowMs when the message is "slow", or
  // when the test releases it.
  upstream = await startReceiver(async (request, response) => {
    const { message } = JSON.parse(request.body || "{}") as { message?: string };
    if (message === "slow") {
      await new Promise<void>((resolve) => {
        heldSlow.add(resolve);
        setTimeout(resolve, slowMs).unref();
      });
    }
    sendJson(response, 200, { echo: message });
  });
  flowlog = await startFlowlog({ clock: steppingClock(), taskQueue });
  worker = await startWorker(temporalServer, testDeps(flowlog.store), taskQueue);
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
  alice = await createAccount(flowlog.store);
});

afterAll(async () => {
  await hurriedWorker?.stop();
  await hurried?.close();
  await worker?.stop();
  await connection?.close();
  await flowlog?.close();
  await upstream?.close();
});

const call = (method: string, path: string, body?: unknown, key: string | null = alice.key, on = flowlog) =>
  restWithKey(on.server.url, key, method, path, body);

/** Through the API, so it has a version to run: the api block calls the upstream, the response echoes it. */
async function createWorkflow(account = alice, on = flowlog): Promise<string> {
  const response = await call(
    "POST",
    `/api/v1/workspaces/${account.workspaceId}/workflows`,
    {
      name: "Echo",
      state: {
        blocks: {
          start: { type: "starter", name: "Start" },
          api: {
            type: "api",
            name: "API",
            config: { method: "POST", url: `${upstream.origin}/echo`, body: { message: "<start.message>" } },
          },
          answer: { type: "response", name: "Answer", config: { data: { echo: "<api.data.echo>" } } },
        },
        edges: [
          { source: "start", target: "api" },
          { source: "api", target: "answer" },
        ],
      },
    },
    account.key,
    on,
  );
  expect(response.status, response.text).toBe(200);
  return (response.json as { workflow: { id: string } }).workflow.id;
}

/** The workflow's log entries as the store lists them, newest first. */
const entriesOf = async (workflowId: string, extra: Partial<LogFilter> = {}) =>
  (
    await flowlog.store.logs.list(
      { workspaceId: alice.workspaceId, workflowIds: [workflowId], ...extra },
      { order: "desc", limit: 100, withCostDetail: false, withTraceSpans: false, withFinalOutput: false },
    )
  ).entries;

/** The newest entry, as a list of its page. */
const page = {
  order: "desc",
  limit: 1,
  withCostDetail: false,
  withTraceSpans: false,
  withFinalOutput: false,
} as const;

/** Waits until the execution, whose answer gave up on it, has its one entry in `on`'s store, at info. */
async function expectLoggedAtInfo(on: TestFlowlog, workspaceId: string, executionId: string): Promise<void> {
  await expect
    .poll(async () => (await on.store.logs.list({ workspaceId, executionId }, page)).entries, {
      timeout: 20_000,
      interval: 100,
    })
    .toEqual([expect.objectContaining({ level: "info", executionId })]);
}

const scheduleDescription = (id: string) => temporal.schedule.getHandle(`flowlog-${id}`).describe();

/** `flowlog run`, the manual trigger, against this test's data dir and the run's dev server. */
const flowlogRun = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const env = {
      ...process.env,
      FLOWLOG_DATA_DIR: flowlog.dataDir,
      TEMPORAL_ADDRESS: temporalServer.address,
      TEMPORAL_NAMESPACE: temporalServer.namespace,
    };
    execFile(process.execPath, [cli, "run", ...args], { env, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });

describe("deleting a workflow (D31)", () => {
  it("ends its schedules, webhook and watchers; runs in flight are logged; new runs are 404 on every trigger; its logs stay", async () => {
    const workflowId = await createWorkflow();
    const schedules = [];
    for (const cron of ["0 0 1 1 *", "0 12 * * *"]) {
      const created = await call("POST", `/api/v1/workflows/${workflowId}/schedules`, { cron });
      expect(created.status, created.text).toBe(200);
      schedules.push((created.json as { schedule: { id: string } }).schedule.id);
    }
    const webhook = await call("POST", `/api/v1/workflows/${workflowId}/webhook`, {});
    const webhookPath = new URL((webhook.json as { url: string }).url).pathname;
    const watched = await call("POST", `/api/v1/workspaces/${alice.workspaceId}/notifications`, {
      channel: "webhook",
      webhook: { url: `${upstream.origin}/hook` },
      workflowIds: [workflowId],
      alertRule: { rule: "no_activity", threshold: 24 },
    });
    expect(watched.status, watched.text).toBe(200);
    const watcher = temporal.workflow.getHandle(
      inactivityWatchId((watched.json as { subscription: { id: string } }).subscription.id, workflowId),
    );
    expect((await watcher.describe()).status.name).toBe("RUNNING");
    const done = await call("POST", `/api/v1/workflows/${workflowId}/execute`, {
      input: { message: "before" },
    });
    expect(done.status, done.text).toBe(200);
    const inFlight = await call("POST", `/api/v1/workflows/${workflowId}/execute`, {
      input: { message: "slow" },
      async: true,
    });
    expect(inFlight.status, inFlight.text).toBe(202);

    const deleted = await call("DELETE", `/api/v1/workflows/${workflowId}`);

    expect(deleted.status, deleted.text).toBe(200);
    for (const id of schedules) await expect(scheduleDescription(id)).rejects.toThrow(ScheduleNotFoundError);
    expect(await flowlog.store.triggers.listSchedules(workflowId)).toEqual([]);
    expect((await call("POST", webhookPath, { message: "after" }, null)).status).toBe(404);
    // Terminated by the deletion, or ended by itself when a check it was making found the workflow deleted.
    expect(["TERMINATED", "COMPLETED"]).toContain((await watcher.describe()).status.name);

    const refusals = await Promise.all([
      call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: { message: "after" } }),
      call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: { message: "after" }, async: true }),
      call("POST", `/api/v1/workflows/${workflowId}/chat`, { message: "after" }),
      call("POST", `/api/v1/workflows/${workflowId}/schedules`, { cron: "0 0 1 1 *" }),
    ]);
    expect(refusals.map((answer) => answer.status)).toEqual([404, 404, 404, 404]);
    const manual = await flowlogRun(workflowId, "--input", '{"message":"after"}');
    expect(manual).toMatchObject({ code: 2, stderr: `error: workflow ${workflowId} not found\n` });

    // The run in flight when the workflow was deleted finishes and is logged (D17), beside the earlier one.
    releaseSlow();
    const { executionId } = inFlight.json as { executionId: string };
    await expect
      .poll(async () => await entriesOf(workflowId, { executionId }), { timeout: 20_000, interval: 100 })
      .toHaveLength(1);
    const params = new URLSearchParams({ workspaceId: alice.workspaceId, workflowIds: workflowId });
    const listed = await call("GET", `/api/v1/logs?${params}`);
    expect(listed.status, listed.text).toBe(200);
    const data = (listed.json as { data: Json[] }).data;
    expect(data.map((entry) => entry.executionId).sort()).toEqual(
      [executionId, (done.json as { executionId: string }).executionId].sort(),
    );
    expect(data.every((entry) => entry.level === "info")).toBe(true);
    expect((await call("DELETE", `/api/v1/workflows/${workflowId}`)).status).toBe(404);
  });

  it("a deletion that stopped half-way, its schedules still running, is finished by deleting again", async () => {
    const workflowId = await createWorkflow();
    const created = await call("POST", `/api/v1/workflows/${workflowId}/schedules`, { cron: "0 0 1 1 *" });
    const { id } = (created.json as { schedule: { id: string } }).schedule;
    // What a failure after marking the workflow deleted leaves: the mark, and the rows of live schedules.
    await flowlog.store.workflows.deleteWorkflow(workflowId, Date.now());
    expect((await scheduleDescription(id)).state.paused).toBe(false);

    const again = await call("DELETE", `/api/v1/workflows/${workflowId}`);

    expect(again.status, again.text).toBe(200);
    await expect(scheduleDescription(id)).rejects.toThrow(ScheduleNotFoundError);
    expect(await flowlog.store.triggers.listSchedules(workflowId)).toEqual([]);
    expect((await call("DELETE", `/api/v1/workflows/${workflowId}`)).status).toBe(404);
  });

  it("a schedule that outlived a half-finished deletion runs nothing when it fires: no entry, a refused run", async () => {
    const workflowId = await createWorkflow();
    const created = await call("POST", `/api/v1/workflows/${workflowId}/schedules`, { cron: "0 0 1 1 *" });
    const { id } = (created.json as { schedule: { id: string } }).schedule;
    await flowlog.store.workflows.deleteWorkflow(workflowId, Date.now());

    const run = await fireSchedule(temporal, `flowlog-${id}`);

    await expect(run.result()).rejects.toMatchObject({
      cause: { type: "ExecutionRefused", message: expect.stringMatching(/was deleted/) },
    });
    expect(await entriesOf(workflowId)).toEqual([]);
    expect((await call("DELETE", `/api/v1/workflows/${workflowId}`)).status).toBe(200);
  });

  it("another workspace's member cannot delete it, even half-deleted: 404", async () => {
    const workflowId = await createWorkflow();
    await call("POST", `/api/v1/workflows/${workflowId}/schedules`, { cron: "0 0 1 1 *" });
    const bob = await createAccount(flowlog.store);

    expect((await call("DELETE", `/api/v1/workflows/${workflowId}`, undefined, bob.key)).status).toBe(404);
    await flowlog.store.workflows.deleteWorkflow(workflowId, Date.now());
    expect((await call("DELETE", `/api/v1/workflows/${workflowId}`, undefined, bob.key)).status).toBe(404);
    expect((await call("DELETE", `/api/v1/workflows/${workflowId}`)).status).toBe(200);
  });
});

describe("sync execution deadline (D26 syncExecutionDeadlineMs)", () => {
  beforeAll(async () => {
    // A second flowlog, with its own store and worker, whose sync callers wait only tinyDeadlineMs.
    const hurriedQueue = `${taskQueue}-hurried`;
    hurried = await startFlowlog({
      clock: steppingClock(),
      taskQueue: hurriedQueue,
      quotas: { ...defaultQuotas, syncExecutionDeadlineMs: tinyDeadlineMs },
    });
    hurriedWorker = await startWorker(temporalServer, testDeps(hurried.store), hurriedQueue);
    hurriedAccount = await createAccount(hurried.store);
    workflowId = await createWorkflow(hurriedAccount, hurried);
  });

  let hurriedAccount: TestAccount;
  let workflowId: string;
  const onHurried = (method: string, path: string, body: unknown) =>
    call(method, path, body, hurriedAccount.key, hurried);

  it.each([
    [
      "execute",
      (id: string) => onHurried("POST", `/api/v1/workflows/${id}/execute`, { input: { message: "slow" } }),
    ],
    ["chat", (id: string) => onHurried("POST", `/api/v1/workflows/${id}/chat`, { message: "slow" })],
  ])(
    "a sync %s past the deadline is 504 deadline_exceeded with its executionId; the run goes on and is logged",
    async (_, run) => {
      const startedAt = Date.now();

      const answer = await run(workflowId);

      expect(Date.now() - startedAt).toBeLessThan(slowMs);
      expect(answer.status, answer.text).toBe(504);
      const problem = answer.json as { code: string; detail: string; executionId: string };
      expect(problem).toMatchObject({
        code: "deadline_exceeded",
        executionId: expect.stringMatching(/^ex_/),
      });
      expect(problem.detail).toContain(problem.executionId);
      expect(answer.headers["flowlog-execution-id"]).toBe(problem.executionId);
      releaseSlow();
      await expectLoggedAtInfo(hurried, hurriedAccount.workspaceId, problem.executionId);
    },
  );

  it("a sync call that finishes within the deadline answers as usual", async () => {
    const answer = await onHurried("POST", `/api/v1/workflows/${workflowId}/execute`, {
      input: { message: "quick" },
    });

    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toMatchObject({ status: "success" });
  });
});

describe("a sync call's own deadline, when it comes before D26's", () => {
  let workflowId: string;
  beforeAll(async () => {
    workflowId = await createWorkflow();
  });

  // The deadline goes as a header, the clients' own timers left unset: what is tested is the server's answer.
  it.each([
    ["gRPC", "grpc-timeout", "1000m", (baseUrl: string) => createGrpcTransport({ baseUrl })],
    [
      "Connect",
      "connect-timeout-ms",
      "1000",
      (baseUrl: string) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
    ],
  ] as const)(
    "over %s (%s) it is deadline_exceeded at that deadline, naming the execution, which goes on and is logged",
    async (_, header, value, transport) => {
      const client = createClient(WorkflowsService, transport(flowlog.server.url));
      const startedAt = Date.now();

      const error = await client
        .executeWorkflow(
          { id: workflowId, input: fromJson(ValueSchema, { message: "slow" }) },
          { headers: { "x-api-key": alice.key, [header]: value } },
        )
        .then(
          () => undefined,
          (thrown: unknown) => ConnectError.from(thrown),
        );

      // Answered at the call's deadline, not after the slow upstream nor D26's five minutes.
      expect(Date.now() - startedAt).toBeLessThan(slowMs);
      expect(error?.code, error?.message).toBe(Code.DeadlineExceeded);
      const executionId = error?.metadata.get("flowlog-execution-id") as string;
      expect(executionId).toMatch(/^ex_/);
      expect(error?.rawMessage).toContain(
        `execution ${executionId} did not finish within the call's own deadline`,
      );
      releaseSlow();
      await expectLoggedAtInfo(flowlog, alice.workspaceId, executionId);
    },
  );
});

describe("a sync call whose client leaves", () => {
  const metrics = new ProcessMetrics("serve");
  let watched: TestFlowlog;
  let watchedWorker: RunningWorker;
  let account: TestAccount;
  let workflowId: string;
  const queue = `${taskQueue}-watched`;
  beforeAll(async () => {
    // A flowlog whose Temporal calls are timed as `flowlog serve` times them, with its own store and worker.
    watched = await startFlowlog({
      clock: steppingClock(),
      taskQueue: queue,
      temporalInterceptors: [metrics.temporalInterceptor()],
    });
    watchedWorker = await startWorker(temporalServer, testDeps(watched.store), queue);
    account = await createAccount(watched.store);
    workflowId = await createWorkflow(account, watched);
  });
  afterAll(async () => {
    await watchedWorker?.stop();
    await watched?.close();
  });

  /** The server's long polls for an execution's result that ended CANCELLED (gRPC's code 1). */
  const cancelledPolls = async () => {
    const histogram = (await metrics.registry.getMetricsAsJSON()).find(
      (metric) => metric.name === "flowlog_temporal_call_duration_seconds",
    );
    const count = histogram?.values.find(
      (value) =>
        (value as { metricName?: string }).metricName === "flowlog_temporal_call_duration_seconds_count" &&
        value.labels.method === "GetWorkflowExecutionHistory" &&
        value.labels.status === "1",
    );
    return count?.value ?? 0;
  };

  it("ends the server's wait for the result when it goes; the execution goes on and is logged", async () => {
    const client = createClient(
      WorkflowsService,
      createConnectTransport({ baseUrl: watched.server.url, httpVersion: "1.1" }),
    );
    const leave = new AbortController();
    const answered = client
      .executeWorkflow(
        { id: workflowId, input: fromJson(ValueSchema, { message: "slow" }) },
        { headers: { "x-api-key": account.key }, signal: leave.signal },
      )
      .then(
        () => "answered",
        (thrown: unknown) => ConnectError.from(thrown).code,
      );
    // The execution runs (its upstream holds it slowMs) and the server waits for its result.
    await expect
      .poll(
        async () => {
          const running = temporal.workflow.list({
            query: `TaskQueue="${queue}" AND ExecutionStatus="Running"`,
          });
          for await (const _ of running) return true;
          return false;
        },
        { timeout: 10_000, interval: 100 },
      )
      .toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await cancelledPolls()).toBe(0);
    const leftAt = Date.now();
    leave.abort();
    expect(await answered).toBe(Code.Canceled);

    // The wait ends with the client, long before the execution would have ended it.
    await expect.poll(cancelledPolls, { timeout: slowMs / 2, interval: 50 }).toBeGreaterThanOrEqual(1);
    expect(Date.now() - leftAt).toBeLessThan(slowMs / 2);
    releaseSlow();
    await expect
      .poll(async () => (await watched.store.logs.list({ workspaceId: account.workspaceId }, page)).entries, {
        timeout: 20_000,
        interval: 100,
      })
      .toEqual([expect.objectContaining({ level: "info", workflowId })]);
  });
});
