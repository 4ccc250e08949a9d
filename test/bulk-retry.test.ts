import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { defaultPlanLimits, type PlanTable } from "../src/limits/plans.js";
import { createApi } from "../src/server/api.js";
import type { ApiServer } from "../src/server/api-server.js";
import { bulkJobWorkflowId } from "../src/temporal/bulk-job-ids.js";
import { lazyTemporalClient } from "../src/temporal/client.js";
import { restWithKey, startTestApiServer } from "./support/api-server.js";
import { type RunningWorker, spawnWorkerProcess, startWorker, testDeps } from "./support/engine.js";
import {
  createAccount,
  execution,
  operatorToken,
  startFlowlog,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { type HttpReceiver, sendJson, startReceiver } from "./support/http-receiver.js";
import { failedPostingRuns } from "./support/posting-workflow.js";
import { until } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `bulk-${randomUUID()}`;

let flowlog: TestFlowlog;
const workers: RunningWorker[] = [];
const servers: ApiServer[] = [];
/** The upstream the workflows' HTTP block calls: down for the paths in `down`, up for the others. */
let upstream: HttpReceiver;
const down = new Set<string>();

beforeAll(async () => {
  upstream = await startReceiver((request, response) => {
    const path = request.target.split("?")[0] as string;
    if (down.has(path)) sendJson(response, 503, { error: "down for maintenance" });
    else sendJson(response, 200, { ok: true });
  });
  flowlog = await startFlowlog({ taskQueue });
  workers.push(await startWorker(temporalServer, testDeps(flowlog.store), taskQueue));
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(servers.map((s) => s.close()));
  await flowlog?.close();
  await upstream?.close();
});

/** This file's store behind an API of its own whose executions and jobs run on `queue`. */
async function apiOn(queue: string): Promise<string> {
  const api = createApi({
    config: { operatorToken, publicBaseUrl: "http://flowlog.test", planLimits: defaultPlanLimits },
    store: flowlog.store,
    temporal: {
      client: lazyTemporalClient(temporalServer.address, temporalServer.namespace),
      taskQueue: queue,
    },
  });
  const server = await startTestApiServer(api);
  servers.push(server);
  return server.url;
}

/** The calls the upstream received on one path, by the order each posted. */
const ordersTo = (path: string) =>
  upstream.received
    .filter((r) => r.target.split("?")[0] === path)
    .map((r) => (JSON.parse(r.body) as { order: number }).order);

interface Outage {
  account: TestAccount;
  workflowId: string;
  path: string;
  failed: string[];
}

/**
 * A workflow whose HTTP block posts the input's order to a path of the upstream, run `count` times while
 * the path is down, so each execution is logged failed; then the path comes back up.
 */
async function outage(api: string, count: number): Promise<Outage> {
  const account = await createAccount(flowlog.store);
  const run = await failedPostingRuns(api, flowlog.store, account, { origin: upstream.origin, down }, count);
  return { account, ...run };
}

interface BulkJobJson {
  id: string;
  status: string;
  total: number;
  done: number;
  failed: number;
  processed: number;
  waitingUntil?: string;
  lastFailure?: string;
}

const bulkRetry = (api: string, { account, workflowId }: Outage, body: Record<string, unknown> = {}) =>
  restWithKey(api, account.key, "POST", `/api/v1/workspaces/${account.workspaceId}/executions:bulkRetry`, {
    workflowIds: [workflowId],
    level: "error",
    ...body,
  });

async function jobOf(api: string, account: TestAccount, id: string): Promise<BulkJobJson> {
  const read = await restWithKey(
    api,
    account.key,
    "GET",
    `/api/v1/workspaces/${account.workspaceId}/bulk-jobs/${id}`,
  );
  expect(read.status, read.text).toBe(200);
  return (read.json as { job: BulkJobJson }).job;
}

const ended = (api: string, account: TestAccount, id: string, ms = 60_000) =>
  until(
    `bulk job ${id} ended`,
    async () => {
      const job = await jobOf(api, account, id);
      return job.status === "running" ? undefined : job;
    },
    ms,
  );

/** Each failed execution's retries, by the retry links of the workflow's logged entries. */
async function retriesOf({ account, workflowId, failed }: Outage): Promise<Map<string, string[]>> {
  const retries = new Map<string, string[]>(failed.map((id) => [id, []]));
  const page = await flowlog.store.logs.list(
    { workspaceId: account.workspaceId, workflowIds: [workflowId] },
    { order: "asc", limit: 1000, withCostDetail: false, withTraceSpans: false, withFinalOutput: false },
  );
  for (const entry of page.entries) {
    const { retryOf } = await flowlog.store.logs.retryLinks(entry.executionId);
    if (retryOf) retries.get(retryOf)?.push(entry.executionId);
  }
  return retries;
}

/**
 * Once each failed execution has a logged retry: each exactly one, logged info, its order posted again.
 * A worker killed in an HTTP block's call leaves the call to be made again (its activity runs again on
 * another worker), so across a kill the upstream sees each order at least twice rather than exactly.
 */
async function expectEachRetriedOnce(run: Outage, calls: "exact" | "at least" = "exact"): Promise<void> {
  const retries = await until("every retry logged", async () => {
    const found = await retriesOf(run);
    return [...found.values()].every((r) => r.length > 0) ? found : undefined;
  });
  expect([...retries.values()].map((r) => r.length)).toEqual(run.failed.map(() => 1));
  for (const [retryOf, [retry]] of retries) {
    const logged = await flowlog.store.logs.getExecution(retry as string);
    expect(logged?.entry.level, `the retry of ${retryOf}`).toBe("info");
    expect((await flowlog.store.logs.retryLinks(retryOf)).retriedBy).toBe(retry);
  }
  const orders = run.failed.map((_, order) => order);
  const posted = ordersTo(run.path).sort((a, b) => a - b);
  // Once while down, then, by its retry, once while up.
  if (calls === "exact") expect(posted).toEqual(orders.flatMap((o) => [o, o]));
  else for (const order of orders) expect(posted.filter((o) => o === order).length).toBeGreaterThanOrEqual(2);
}

describe("BulkRetryExecutions (D47): POST /api/v1/workspaces/{workspaceId}/executions:bulkRetry", () => {
  it("the preview counts what the job then retries; each failed execution is retried exactly once", async () => {
    const api = flowlog.server.url;
    const run = await outage(api, 30);

    const preview = await bulkRetry(api, run, { preview: true });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.json).toEqual({ executions: 30 });
    expect(await retriesOf(run)).toEqual(new Map(run.failed.map((id) => [id, []])));

    const started = await bulkRetry(api, run);
    expect(started.status, started.text).toBe(202);
    const { job } = started.json as { executions: number; job: BulkJobJson };
    expect(started.json).toMatchObject({ executions: 30 });
    expect(job).toMatchObject({
      id: bulkJobWorkflowId("retry", run.account.workspaceId, 1),
      status: "running",
      total: 30,
    });

    const done = await ended(api, run.account, job.id);
    expect(done).toMatchObject({ status: "completed", total: 30, done: 30, failed: 0, processed: 30 });
    await expectEachRetriedOnce(run);
    // The retries succeeded and started after the job: a second job selects none of them again.
    const again = await bulkRetry(api, run, { preview: true });
    expect(again.json).toEqual({ executions: 30 });
  }, 120_000);

  it("a retry its execution's record refuses counts as failed, naming it, and the job goes on", async () => {
    const api = flowlog.server.url;
    const run = await outage(api, 3);
    const succeeded = execution(run.account, run.workflowId, {
      level: "info",
      startedAt: Date.now() - 60_000,
    });
    await flowlog.store.logs.insertExecution(succeeded);

    const started = await bulkRetry(api, run, { level: undefined, from: "failed_block" });
    expect(started.status, started.text).toBe(202);
    const { job } = started.json as { job: BulkJobJson };

    const done = await ended(api, run.account, job.id);
    expect(done).toMatchObject({ status: "completed", total: 4, done: 3, failed: 1 });
    expect(done.lastFailure).toContain(`execution ${succeeded.entry.executionId} cannot be retried`);
  }, 60_000);

  it("bad input is invalid_argument naming the field; beyond 10,000 executions is refused, naming the limit", async () => {
    const account = await createAccount(flowlog.store);
    const path = `/api/v1/workspaces/${account.workspaceId}/executions:bulkRetry`;
    const call = (body: unknown) => restWithKey(flowlog.server.url, account.key, "POST", path, body);

    const badFrom = await call({ from: "somewhere" });
    expect(badFrom.status, badFrom.text).toBe(400);
    expect(JSON.stringify(badFrom.json)).toContain("from");
    const badDate = await call({ startDate: "2026-02-30" });
    expect(badDate.status, badDate.text).toBe(400);
    expect(JSON.stringify(badDate.json)).toContain("startDate");

    const workflowId = "wf_many";
    const many = Array.from({ length: 10_001 }, (_, i) =>
      execution(account, workflowId, { level: "error", startedAt: Date.now() - 3_600_000 + i }),
    );
    for (let i = 0; i < many.length; i += 2_000)
      await flowlog.store.logs.insertExecutions(many.slice(i, i + 2_000));
    // SQLite's inserts held this thread, the API's too, for seconds: the server's keep-alive timers that ran
    // out meanwhile close their idle sockets now, before a call could be written on one of them.
    await sleep(200);
    const preview = await call({ level: "error", preview: true });
    expect(preview.json).toEqual({ executions: 10_001 });
    const refused = await call({ level: "error" });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json).toMatchObject({
      code: "invalid_argument",
      detail: expect.stringContaining("more than the 10000 one bulk job takes"),
    });
  }, 120_000);
});

describe("A bulk retry job (D47): progress, pace, cancel", () => {
  /** A worker whose plan gives `rpm` async executions a minute, one at a time, with its API. */
  async function slowBucket(rpm: number): Promise<string> {
    const queue = `bulk-slow-${randomUUID()}`;
    const planLimits: PlanTable = {
      ...defaultPlanLimits,
      enterprise: {
        ...defaultPlanLimits.enterprise,
        asyncExecutions: { requestsPerMinute: rpm, maxBurst: 1 },
      },
    };
    workers.push(await startWorker(temporalServer, testDeps(flowlog.store, { planLimits }), queue));
    return apiOn(queue);
  }

  it("waits for the caller's empty bucket instead of failing, then goes on to the end", async () => {
    const api = await slowBucket(120);
    const run = await outage(api, 5);

    const started = await bulkRetry(api, run);
    expect(started.status, started.text).toBe(202);
    const { job } = started.json as { job: BulkJobJson };

    const waiting = await until("the job waiting for a token", async () => {
      const read = await jobOf(api, run.account, job.id);
      return read.waitingUntil === undefined ? undefined : read;
    });
    expect(waiting).toMatchObject({ status: "running", failed: 0 });
    expect(waiting.done).toBeLessThan(5);
    const done = await ended(api, run.account, job.id);
    expect(done).toMatchObject({ status: "completed", total: 5, done: 5, failed: 0 });
    expect(done.waitingUntil).toBeUndefined();
    await expectEachRetriedOnce(run);
  }, 90_000);

  it("CancelBulkJob stops it: no retry starts after, and a second cancel is refused", async () => {
    // One token every 20 s: the job retries one execution, then waits.
    const api = await slowBucket(3);
    const run = await outage(api, 4);
    const started = await bulkRetry(api, run);
    const { job } = started.json as { job: BulkJobJson };
    await until(
      "the job waiting for a token",
      async () => (await jobOf(api, run.account, job.id)).waitingUntil,
    );

    const path = `/api/v1/workspaces/${run.account.workspaceId}/bulk-jobs/${job.id}:cancel`;
    const cancelled = await restWithKey(api, run.account.key, "POST", path, {});
    expect(cancelled.status, cancelled.text).toBe(200);

    const stopped = await ended(api, run.account, job.id, 20_000);
    expect(stopped).toMatchObject({ status: "cancelled", total: 4 });
    expect(stopped.done).toBeLessThan(4);
    const retried = async () => [...(await retriesOf(run)).values()].filter((r) => r.length > 0).length;
    await until("the retries it started logged", async () =>
      (await retried()) === stopped.done ? true : undefined,
    );
    const again = await restWithKey(api, run.account.key, "POST", path, {});
    expect(again.status, again.text).toBe(400);
    expect(again.json).toMatchObject({ code: "failed_precondition" });
  }, 90_000);

  it("another workspace's job, or an unknown one, is not found", async () => {
    const api = flowlog.server.url;
    const run = await outage(api, 1);
    const { job } = (await bulkRetry(api, run)).json as { job: BulkJobJson };
    const bob = await createAccount(flowlog.store);

    const theirs = await restWithKey(
      api,
      bob.key,
      "GET",
      `/api/v1/workspaces/${bob.workspaceId}/bulk-jobs/${job.id}`,
    );
    const unknown = await restWithKey(
      api,
      run.account.key,
      "GET",
      `/api/v1/workspaces/${run.account.workspaceId}/bulk-jobs/${bulkJobWorkflowId("retry", run.account.workspaceId, 99)}`,
    );

    expect(theirs.status, theirs.text).toBe(404);
    expect(unknown.status, unknown.text).toBe(404);
    expect(await ended(api, run.account, job.id)).toMatchObject({ status: "completed", done: 1 });
  }, 60_000);
});

describe("A bulk retry job across a worker's death (D47)", () => {
  it("a job whose worker is SIGKILLed mid-way goes on on another: each execution retried exactly once", async () => {
    const queue = `bulk-kill-${randomUUID()}`;
    const api = await apiOn(queue);
    const doomed = await spawnWorkerProcess(temporalServer, queue, flowlog.dataDir, flowlog.env);
    try {
      const run = await outage(api, 60);
      const started = await bulkRetry(api, run);
      expect(started.status, started.text).toBe(202);
      const { job } = started.json as { job: BulkJobJson };
      await until("a few retries started", () =>
        ordersTo(run.path).length >= run.failed.length + 3 ? true : undefined,
      );
      doomed.kill("SIGKILL");
      const linked = [...(await retriesOf(run)).values()].filter((r) => r.length > 0).length;
      const replacement = await spawnWorkerProcess(temporalServer, queue, flowlog.dataDir, flowlog.env);
      try {
        const done = await ended(api, run.account, job.id, 90_000);
        expect(done).toMatchObject({ status: "completed", total: 60, done: 60, failed: 0 });
        await expectEachRetriedOnce(run, "at least");
      } finally {
        replacement.kill("SIGTERM");
      }
      // The kill came mid-job: retries were still to start on the replacement.
      expect(linked).toBeLessThan(60);
    } finally {
      doomed.kill("SIGKILL");
    }
  }, 180_000);
});
