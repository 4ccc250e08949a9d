import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { Client, Connection, ScheduleNotFoundError, WorkflowNotFoundError } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WorkflowsService } from "../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { defaultPlanLimits } from "../src/limits/plans.js";
import { defaultQuotas } from "../src/limits/quotas.js";
import { type ExecutionDependencies, runWorkflow } from "../src/services/triggers/executions.js";
import type { Trigger, UserRecord } from "../src/store/records.js";
import { logIdOf } from "../src/temporal/activities/execution-activities.js";
import { fanOutWorkflowId } from "../src/temporal/delivery-ids.js";
import { executionIdOf } from "../src/temporal/execution-ids.js";
import { flowlogSearchAttributes } from "../src/temporal/search-attributes.js";
import { executionWorkflowId } from "../src/temporal/start-execution.js";
import { isoFromMs } from "../src/util/time.js";
import { clientWithKey, restWithKey, rpcClients, rpcError } from "./support/api-server.js";
import { type RunningWorker, startWorker, testDeps } from "./support/engine.js";
import {
  createAccount,
  execution,
  startFlowlog,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { type HttpReceiver, sendJson, startReceiver } from "./support/http-receiver.js";
import { fireSchedule } from "./support/schedules.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `triggers-${randomUUID()}`;
/** A task queue no worker polls, for the CLI run this file inspects without running it. */
const unpolledQueue = `unpolled-${randomUUID()}`;
const cli = fileURLToPath(new URL("../bin/flowlog.js", import.meta.url));
// The execution buckets (D12) refill with time: a frozen clock keeps a drained bucket drained.
const now = Date.now();
const clock = () => now;

type Json = Record<string, unknown>;
type Answer = { executionId: string; status?: string; output?: Json };
type LogEntryJson = Json & { executionId: string; trigger: Trigger; executionData: { finalOutput: Json } };

let flowlog: TestFlowlog;
let worker: RunningWorker;
let upstream: HttpReceiver;
let connection: Connection;
let temporal: Client;
let executions: ExecutionDependencies;
let alice: TestAccount;
let bob: TestAccount;
let workflowId: string;

beforeAll(async () => {
  // The upstream the api block calls: it echoes the message, and answers 503 when asked to fail.
  upstream = await startReceiver((request, response) => {
    const { message } = JSON.parse(request.body || "{}") as { message?: string };
    if (message === "fail") sendJson(response, 503, { busy: true });
    else sendJson(response, 200, { echo: message });
  });
  flowlog = await startFlowlog({ clock, taskQueue });
  worker = await startWorker(temporalServer, testDeps(flowlog.store), taskQueue);
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
  executions = {
    store: flowlog.store,
    planLimits: defaultPlanLimits,
    quotas: defaultQuotas,
    temporal,
    taskQueue,
    clock,
  };
  alice = await createAccount(flowlog.store);
  bob = await createAccount(flowlog.store);
  workflowId = await createWorkflow(alice);
});

afterAll(async () => {
  await worker?.stop();
  await connection?.close();
  await flowlog?.close();
  await upstream?.close();
});

/** A REST call with a key (Alice's unless another, or none, is given) and a JSON body when there is one. */
const call = (method: string, path: string, body?: unknown, key: string | null = alice.key) =>
  restWithKey(flowlog.server.url, key, method, path, body);

/**
 * Created through the API, so it has a version to run: the api block calls the upstream, and a condition
 * on `<api.status>` picks the response block, 200 with the echo or 502 naming the upstream's status.
 */
async function createWorkflow(account: TestAccount): Promise<string> {
  const respond = (name: string, config: Json) => ({ type: "response", name, config });
  const response = await call(
    "POST",
    `/api/v1/workspaces/${account.workspaceId}/workflows`,
    {
      name: "Echo through upstream",
      state: {
        blocks: {
          start: { type: "starter", name: "Start" },
          api: {
            type: "api",
            name: "API",
            config: {
              method: "POST",
              url: `${upstream.origin}/echo`,
              body: { message: "<start.message>" },
              retries: 0,
            },
          },
          check: {
            type: "condition",
            name: "Check",
            config: { conditions: [{ id: "ok", expression: "<api.status> == 200" }, { id: "else" }] },
          },
          ok: respond("Answer", { data: { echo: "<api.data.echo>", message: "<start.message>" } }),
          down: respond("Upstream Down", { status: 502, data: { upstreamStatus: "<api.status>" } }),
        },
        edges: [
          { source: "start", target: "api" },
          { source: "api", target: "check" },
          // A 5xx answer is the api block's error (D16); this edge still lets the condition branch on it.
          { source: "api", target: "check", sourceHandle: "error" },
          { source: "check", target: "ok", sourceHandle: "ok" },
          { source: "check", target: "down", sourceHandle: "else" },
        ],
      },
    },
    account.key,
  );
  expect(response.status, response.text).toBe(200);
  return (response.json as { workflow: { id: string } }).workflow.id;
}

/** Waits until the execution's one log entry exists (D17), then reads it through the logs API. */
async function loggedEntry(
  query: { executionId: string } | { trigger: Trigger },
  where: { account: TestAccount; workflowId: string } = { account: alice, workflowId },
): Promise<LogEntryJson> {
  const filter = {
    workspaceId: where.account.workspaceId,
    workflowIds: [where.workflowId],
    ...("executionId" in query ? { executionId: query.executionId } : { triggers: [query.trigger] }),
  };
  const listOptions = {
    order: "desc",
    limit: 10,
    withCostDetail: false,
    withTraceSpans: false,
    withFinalOutput: false,
  } as const;
  await expect
    .poll(async () => (await flowlog.store.logs.list(filter, listOptions)).entries, {
      timeout: 20_000,
      interval: 100,
    })
    .toHaveLength(1);
  const params = new URLSearchParams({
    workspaceId: filter.workspaceId,
    workflowIds: where.workflowId,
    includeFinalOutput: "true",
    ...("executionId" in query ? { executionId: query.executionId } : { triggers: query.trigger }),
  });
  const listed = await call("GET", `/api/v1/logs?${params}`, undefined, where.account.key);
  expect(listed.status, listed.text).toBe(200);
  const [entry] = (listed.json as { data: LogEntryJson[] }).data;
  return entry as LogEntryJson;
}

const connectClient = (key: string) => clientWithKey(WorkflowsService, flowlog.server.url, key);

const asValue = (json: JsonValue) => fromJson(ValueSchema, json);
const userOf = async (account: TestAccount) =>
  (await flowlog.store.accounts.getUser(account.userId)) as UserRecord;

describe("api trigger: POST /api/v1/workflows/{id}/execute (D15)", () => {
  it("a sync call answers 200 with the response block's data, and its log entry says trigger api", async () => {
    const answer = await call("POST", `/api/v1/workflows/${workflowId}/execute`, {
      input: { message: "hello" },
    });

    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toEqual({
      executionId: expect.stringMatching(/^ex_/),
      status: "success",
      output: { echo: "hello", message: "hello" },
    });
    expect(upstream.received.at(-1)?.body).toBe(JSON.stringify({ message: "hello" }));
    const entry = await loggedEntry({ executionId: (answer.json as Answer).executionId });
    expect(entry).toMatchObject({ trigger: "api", level: "info", workflowId });
    expect(entry.executionData.finalOutput).toEqual({
      data: { echo: "hello", message: "hello" },
      status: 200,
      headers: {},
    });
  });

  it("a sync answer too big for Temporal's result is answered whole, from the log entry", async () => {
    // Twice 600 Ki characters in the answer, twice again in the result (its output and its body): before,
    // Temporal refused the result's payload (2 MiB) and terminated the execution, unlogged.
    const message = "m".repeat(600 * 1024);
    const answer = await call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: { message } });

    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      executionId: expect.stringMatching(/^ex_/),
      status: "success",
      output: { echo: message, message },
    });
    const { executionId } = answer.json as Answer;
    const result = await temporal.workflow.getHandle(executionWorkflowId(executionId)).result();
    expect(result).toMatchObject({ status: "success", output: null, httpBody: null, outputInLog: "data" });
    expect(await loggedEntry({ executionId })).toMatchObject({ level: "info" });
  });

  it("runs the version the API admitted, handed over in its start: its local activities are the block's first try and the log write (issue 12)", async () => {
    const answer = await call("POST", `/api/v1/workflows/${workflowId}/execute`, {
      input: { message: "handed over" },
    });
    expect(answer.status, answer.text).toBe(200);
    const { executionId } = answer.json as Answer;
    const history = await temporal.workflow.getHandle(executionWorkflowId(executionId)).fetchHistory();
    const events = history.events ?? [];
    const started = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    const input = JSON.parse(Buffer.from(started ?? []).toString()) as {
      version: number;
      workflow?: { version: number; state: { blocks: Record<string, unknown> } };
    };
    const current = (await flowlog.store.workflows.getWorkflow(workflowId))?.version;
    expect(input.workflow?.version).toBe(current);
    expect(input.version).toBe(current);
    expect(Object.keys(input.workflow?.state.blocks ?? {}).sort()).toEqual([
      "api",
      "check",
      "down",
      "ok",
      "start",
    ]);
    // The local activities recorded: the check of the handed-over version against the store's (issue 49,
    // by digest: the version is not read again), the HTTP block's first try and the log write.
    const localActivities = events.flatMap((event) => {
      const marker = event.markerRecordedEventAttributes;
      if (marker?.markerName !== "core_local_activity") return [];
      const data = marker.details?.data?.payloads?.[0]?.data;
      return [(JSON.parse(Buffer.from(data ?? []).toString()) as { activity_type: string }).activity_type];
    });
    expect(localActivities).toEqual(["checkHandedWorkflow", "tryApiBlock", "writeExecutionLog"]);
    const entry = await loggedEntry({ executionId });
    expect(entry).toMatchObject({ trigger: "api", level: "info", workflowId });
  });

  it("on the other branch the answer carries that response block's status, 502, and its data", async () => {
    const answer = await call("POST", `/api/v1/workflows/${workflowId}/execute`, {
      input: { message: "fail" },
    });

    expect(answer.status, answer.text).toBe(502);
    expect(answer.json).toMatchObject({ status: "success", output: { upstreamStatus: 503 } });
    const entry = await loggedEntry({ executionId: (answer.json as Answer).executionId });
    expect(entry).toMatchObject({ trigger: "api", level: "info" });
  });

  it("over Connect the same call returns the response block's data (Connect has no HTTP status to set)", async () => {
    const client = connectClient(alice.key);

    const ok = await client.executeWorkflow({ id: workflowId, input: asValue({ message: "over connect" }) });
    const down = await client.executeWorkflow({ id: workflowId, input: asValue({ message: "fail" }) });

    expect(ok.status).toBe("success");
    expect(ok.output && toJson(ValueSchema, ok.output)).toEqual({
      echo: "over connect",
      message: "over connect",
    });
    expect(down.output && toJson(ValueSchema, down.output)).toEqual({ upstreamStatus: 503 });
    expect((await loggedEntry({ executionId: ok.executionId })).trigger).toBe("api");
  });

  it("an async call answers 202 with the executionId at once; the log entry appears later with trigger api", async () => {
    const answer = await call("POST", `/api/v1/workflows/${workflowId}/execute`, {
      input: { message: "later" },
      async: true,
    });

    expect(answer.status, answer.text).toBe(202);
    expect(answer.json).toMatchObject({ executionId: expect.stringMatching(/^ex_/) });
    expect(answer.json).not.toHaveProperty("output");
    // D30: an async execution has no result yet, so no status at all (not "").
    expect(answer.json).not.toHaveProperty("status");
    const entry = await loggedEntry({ executionId: (answer.json as Answer).executionId });
    expect(entry).toMatchObject({ trigger: "api", level: "info" });
    expect(entry.executionData.finalOutput).toMatchObject({ data: { echo: "later" } });
  });

  it("over every RPC protocol an async answer has no status set and a sync one has it (D30)", async () => {
    for (const [protocol, client] of rpcClients(WorkflowsService, flowlog.server.url)) {
      const headers = { "x-api-key": alice.key };
      const later = await client.executeWorkflow(
        { id: workflowId, input: asValue({ message: "later" }), async: true },
        { headers },
      );
      const now = await client.executeWorkflow(
        { id: workflowId, input: asValue({ message: "now" }) },
        { headers },
      );

      expect(later.executionId, protocol).toMatch(/^ex_/);
      expect(later.status, protocol).toBeUndefined();
      expect(now.status, protocol).toBe("success");
    }
  });
});

describe("chat trigger: POST /api/v1/workflows/{id}/chat (D15)", () => {
  it("the message reaches the starter and comes back through the response block; trigger chat", async () => {
    const answer = await call("POST", `/api/v1/workflows/${workflowId}/chat`, { message: "hi there" });

    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toMatchObject({
      status: "success",
      output: { echo: "hi there", message: "hi there" },
    });
    expect((await loggedEntry({ executionId: (answer.json as Answer).executionId })).trigger).toBe("chat");
  });
});

describe("webhook trigger: an inbound URL with its own token (D15)", () => {
  const create = async () => {
    const created = await call("POST", `/api/v1/workflows/${workflowId}/webhook`, {});
    expect(created.status, created.text).toBe(200);
    const { url, createdAt } = created.json as { url: string; createdAt: string };
    expect(url).toMatch(new RegExp(`^http://flowlog\\.test/api/v1/webhooks/${workflowId}/whk_`));
    expect(createdAt).toBe(isoFromMs(now));
    return new URL(url).pathname;
  };
  const invoke = (path: string, body: Json = { message: "from a webhook" }) => call("POST", path, body, null);

  it("invoking the URL without an API key starts an execution (202) with the body as input; trigger webhook", async () => {
    const path = await create();

    const answer = await invoke(path);

    expect(answer.status, answer.text).toBe(202);
    expect(answer.json).toMatchObject({ executionId: expect.stringMatching(/^ex_/) });
    const entry = await loggedEntry({ executionId: (answer.json as Answer).executionId });
    expect(entry.trigger).toBe("webhook");
    expect(entry.executionData.finalOutput).toMatchObject({
      data: { echo: "from a webhook", message: "from a webhook" },
    });
  });

  it("an integration may call its webhook 30 times at once from one address: all are accepted (D26 throttles only guesses)", async () => {
    const path = await create();

    // Each call is one authentication attempt of the address until its token is checked and its execution
    // started; 20 may be in flight at once, the rest wait for them, and an accepted one gives its turn back.
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, n) => invoke(path, { message: `call ${n}` })),
    );

    expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(202));
    for (const answer of answers) await loggedEntry({ executionId: (answer.json as Answer).executionId });
  });

  it("a wrong token is 404; re-creating replaces the token, so the old URL is 404; DELETE removes it", async () => {
    const first = await create();
    const wrong = first.replace(/whk_[\w-]+$/, "whk_not-the-token");
    expect((await invoke(wrong)).status).toBe(404);
    expect((await invoke(`/api/v1/webhooks/wf_nowhere/${first.split("/").at(-1)}`)).status).toBe(404);

    const second = await create();
    expect((await invoke(first)).status).toBe(404);
    const accepted = await invoke(second, { message: "second token" });
    expect(accepted.status).toBe(202);
    await loggedEntry({ executionId: (accepted.json as Answer).executionId });

    expect((await call("DELETE", `/api/v1/workflows/${workflowId}/webhook`)).status).toBe(200);
    expect((await invoke(second)).status).toBe(404);
    expect((await call("DELETE", `/api/v1/workflows/${workflowId}/webhook`)).status).toBe(404);
  });
});

describe("schedule trigger: cron through a Temporal Schedule (D15)", () => {
  const schedulesPath = () => `/api/v1/workflows/${workflowId}/schedules`;
  const listed = async () => ((await call("GET", schedulesPath())).json as { schedules: Json[] }).schedules;

  it("a schedule triggered now runs the current version, logged with trigger schedule; it pauses, resumes and is deleted", async () => {
    const created = await call("POST", schedulesPath(), {
      cron: "0 0 1 1 *",
      input: { message: "scheduled" },
    });
    expect(created.status, created.text).toBe(200);
    const schedule = (created.json as { schedule: Json & { id: string } }).schedule;
    expect(schedule).toEqual({
      id: expect.stringMatching(/^sch_/),
      workflowId,
      cron: "0 0 1 1 *",
      paused: false,
      createdAt: isoFromMs(now),
    });
    expect(await listed()).toEqual([schedule]);

    await temporal.schedule.getHandle(`flowlog-${schedule.id}`).trigger();

    const entry = await loggedEntry({ trigger: "schedule" });
    expect(entry.executionId).toContain(schedule.id);
    expect(entry.level).toBe("info");
    // Operators filter scheduled runs in the Temporal UI like every other trigger's.
    const run = await temporal.workflow.getHandle(`execution-${entry.executionId}`).describe();
    expect(run.typedSearchAttributes.get(flowlogSearchAttributes.trigger)).toBe("schedule");
    expect(run.typedSearchAttributes.get(flowlogSearchAttributes.workflowId)).toBe(workflowId);
    expect(entry.executionData.finalOutput).toMatchObject({ data: { echo: "scheduled" } });

    const paused = await call("POST", `/api/v1/schedules/${schedule.id}:pause`, {});
    expect(paused.status, paused.text).toBe(200);
    expect(paused.json).toEqual({ schedule: { ...schedule, paused: true } });
    expect(await listed()).toEqual([{ ...schedule, paused: true }]);
    const resumed = await call("POST", `/api/v1/schedules/${schedule.id}:resume`, {});
    expect(resumed.json).toEqual({ schedule });

    expect((await call("DELETE", `/api/v1/schedules/${schedule.id}`)).status).toBe(200);
    expect(await listed()).toEqual([]);
    await expect(temporal.schedule.getHandle(`flowlog-${schedule.id}`).describe()).rejects.toThrow(
      ScheduleNotFoundError,
    );
    expect((await call("POST", `/api/v1/schedules/${schedule.id}:pause`, {})).status).toBe(404);
  });

  it.each(["every full moon", "61 * * * *", "* * *", "0 0 1 13 *", ""])(
    "an invalid cron expression (%j) is a 400 naming cron, and no schedule is kept",
    async (cron) => {
      const refused = await call("POST", schedulesPath(), { cron });

      expect(refused.status, refused.text).toBe(400);
      expect(refused.json).toMatchObject({
        code: "invalid_argument",
        errors: [{ field: "cron", message: expect.stringContaining("cron") }],
      });
      expect(await listed()).toEqual([]);
    },
  );
});

describe("manual trigger: flowlog run <workflowId> (D15)", () => {
  /** The CLI against this test's data dir and the run's dev server. */
  const flowlogRun = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const env = {
        ...process.env,
        ...flowlog.env,
        TEMPORAL_ADDRESS: temporalServer.address,
        TEMPORAL_NAMESPACE: temporalServer.namespace,
        FLOWLOG_TASK_QUEUE: unpolledQueue,
      };
      execFile(process.execPath, [cli, "run", ...args], { env, timeout: 30_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });

  it("the run the command makes (runWorkflow, trigger manual) is logged with trigger manual", async () => {
    const run = await runWorkflow(executions, {
      caller: { user: await userOf(alice) },
      workflowId,
      trigger: "manual",
      mode: "sync",
      input: asValue({ message: "by hand" }),
    });

    expect(run.result).toMatchObject({ status: "success", httpStatus: 200, httpBody: { echo: "by hand" } });
    expect((await loggedEntry({ executionId: run.executionId })).trigger).toBe("manual");
  });

  it("--help names its options; an unknown workflow, user or bad --input exits 2 with a message", async () => {
    const [help, unknown, noUser, badInput] = await Promise.all([
      flowlogRun("--help"),
      flowlogRun("wf_nowhere"),
      flowlogRun(workflowId, "--user", "usr_nobody"),
      flowlogRun(workflowId, "--input", "{not json"),
    ]);

    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--input <json>[\s\S]*--user <userId>[\s\S]*--async/);
    expect(unknown).toMatchObject({ code: 2, stderr: "error: workflow wf_nowhere not found\n" });
    expect(noUser).toMatchObject({ code: 2, stderr: "error: user usr_nobody not found\n" });
    expect(badInput).toMatchObject({ code: 2, stderr: "error: --input must be JSON\n" });
  });

  it("flowlog run --async starts the execution on FLOWLOG_TASK_QUEUE with trigger manual and the given input", async () => {
    // A queue no worker polls: the execution is inspected and terminated, never run. (The default queue
    // may be polled by another test's flowlog process on the same Temporal, which would run it.)
    const printed = await flowlogRun(workflowId, "--async", "--input", '{"message":"from the CLI"}');

    expect(printed.code, printed.stderr).toBe(0);
    const { executionId } = JSON.parse(printed.stdout) as { executionId: string };
    const handle = temporal.workflow.getHandle(executionWorkflowId(executionId));
    try {
      const description = await handle.describe();
      expect(description.taskQueue).toBe(unpolledQueue);
      expect(description.typedSearchAttributes.get(flowlogSearchAttributes.trigger)).toBe("manual");
      const history = await handle.fetchHistory();
      const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      expect(JSON.parse(Buffer.from(payload?.data ?? []).toString("utf8"))).toMatchObject({
        executionId,
        workflowId,
        trigger: "manual",
        input: { message: "from the CLI" },
        billedUserId: alice.userId,
      });
    } finally {
      await handle.terminate("inspected by test/triggers.test.ts");
    }
  });
});

describe("execution limits (D12): refusals are 429 with a clear message", () => {
  const limitsOf = async (account: TestAccount) => {
    const listed = await call(
      "GET",
      `/api/v1/logs?workspaceId=${account.workspaceId}`,
      undefined,
      account.key,
    );
    expect(listed.status, listed.text).toBe(200);
    return listed.json as { data: Json[]; limits: Json };
  };

  it("a free user's sync bucket admits a burst of 20 and refuses the 21st with Retry-After; the logs API shows that bucket", async () => {
    const frank = await createAccount(flowlog.store, "free");
    const frankWorkflow = await createWorkflow(frank);
    // Twenty at once through the manual trigger, which shares the bucket and leaves the API's own (D11) full.
    const burst = await Promise.all(
      Array.from({ length: 20 }, async (_, i) =>
        runWorkflow(executions, {
          caller: { user: await userOf(frank) },
          workflowId: frankWorkflow,
          trigger: "manual",
          mode: "sync",
          input: asValue({ message: `burst ${i}` }),
        }),
      ),
    );
    expect(burst.map((run) => run.result?.status)).toEqual(Array(20).fill("success"));

    const refused = await call(
      "POST",
      `/api/v1/workflows/${frankWorkflow}/execute`,
      { input: { message: "one too many" } },
      frank.key,
    );

    expect(refused.status, refused.text).toBe(429);
    // 10 per minute: the next token comes in 6 s.
    expect(refused.headers["retry-after"]).toBe("6");
    expect((refused.json as { detail: string }).detail).toMatch(/too many sync executions.*retry after 6 s/);
    expect(Number(refused.headers["x-ratelimit-remaining"])).toBeGreaterThan(0);
    const { data, limits } = await limitsOf(frank);
    expect(data).toHaveLength(20);
    expect(limits).toMatchObject({
      workflowExecutionRateLimit: {
        sync: { requestsPerMinute: 10, maxBurst: 20, remaining: 0, resetAt: isoFromMs(now + 6_000) },
        async: { requestsPerMinute: 50, maxBurst: 100, remaining: 100 },
      },
    });

    const separateBucket = await call(
      "POST",
      `/api/v1/workflows/${frankWorkflow}/execute`,
      { input: { message: "async still admitted" }, async: true },
      frank.key,
    );
    expect(separateBucket.status, separateBucket.text).toBe(202);
  });

  it("a user whose month's usage reached the plan's limit is refused, naming the usage limit, without spending a token", async () => {
    const gina = await createAccount(flowlog.store, "free");
    const ginaWorkflow = await createWorkflow(gina);
    const cost = { total: 10, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} };
    await flowlog.store.logs.insertExecution(execution(gina, ginaWorkflow, { startedAt: now, cost }));

    const refusals = await Promise.all(
      [false, true].map((async) =>
        call(
          "POST",
          `/api/v1/workflows/${ginaWorkflow}/execute`,
          { input: { message: "x" }, async },
          gina.key,
        ),
      ),
    );

    for (const refused of refusals) {
      expect(refused.status, refused.text).toBe(429);
      expect((refused.json as { detail: string }).detail).toMatch(/usage limit of the free plan \(10 USD/);
    }
    const { limits } = await limitsOf(gina);
    expect(limits).toMatchObject({
      workflowExecutionRateLimit: { sync: { remaining: 20 }, async: { remaining: 100 } },
      usage: { currentPeriodCost: 10, limit: 10, plan: "free", isExceeded: true },
    });

    // A schedule has no request to refuse: its run is refused when it fires. A refused run is no execution
    // (issue 11): no log entry, and no notification although this subscription matches every entry. The
    // Temporal run fails with the reason, where operators look.
    await subscribeWebhook(flowlog.store, gina.workspaceId, `${upstream.origin}/hook`, {
      createdAt: now,
      secret: "hook-secret",
    });
    const created = await call(
      "POST",
      `/api/v1/workflows/${ginaWorkflow}/schedules`,
      { cron: "0 0 1 1 *", input: { message: "x" } },
      gina.key,
    );
    const { id } = (created.json as { schedule: { id: string } }).schedule;
    const run = await fireSchedule(temporal, `flowlog-${id}`);

    await expect(run.result()).rejects.toMatchObject({
      cause: { type: "ExecutionRefused", message: expect.stringMatching(/usage limit of the free plan/) },
    });
    const executionId = executionIdOf(run.workflowId);
    expect(await flowlog.store.logs.getExecution(executionId)).toBeUndefined();
    await expect(
      temporal.workflow.getHandle(fanOutWorkflowId(logIdOf(executionId))).describe(),
    ).rejects.toThrow(WorkflowNotFoundError);
    expect((await call("DELETE", `/api/v1/schedules/${id}`, undefined, gina.key)).status).toBe(200);
  });
});

describe("isolation (D10): a workflow another user cannot see does not exist for them", () => {
  it("Bob's key gets 404 executing, chatting with or adding triggers to Alice's workflow", async () => {
    const attempts = await Promise.all([
      call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: { message: "x" } }, bob.key),
      call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: {}, async: true }, bob.key),
      call("POST", `/api/v1/workflows/${workflowId}/chat`, { message: "x" }, bob.key),
      call("POST", `/api/v1/workflows/${workflowId}/webhook`, {}, bob.key),
      call("POST", `/api/v1/workflows/${workflowId}/schedules`, { cron: "0 0 1 1 *" }, bob.key),
      call("GET", `/api/v1/workflows/${workflowId}/schedules`, undefined, bob.key),
    ]);

    expect(attempts.map((a) => a.status)).toEqual(Array(attempts.length).fill(404));
    const overConnect = await rpcError(() => connectClient(bob.key).executeWorkflow({ id: workflowId }));
    expect(overConnect.code).toBe(Code.NotFound);
  });
});
