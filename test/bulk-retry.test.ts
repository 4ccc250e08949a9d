import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { defaultPlanLimits, type PlanTable } from "../src/limits/plans.js";
import { bulkJobWorkflowId } from "../src/temporal/bulk-job-ids.js";
import { restWithKey } from "./support/api-server.js";
import {
  type BulkJobJson,
  bulkJobEnded,
  bulkJobOf,
  expectEachRetriedOnce,
  type Outage,
  postingOutage,
  requestBulkJob,
  retriesOf,
} from "./support/bulk-jobs.js";
import { type RunningWorker, spawnWorkerProcess, startWorker, testDeps } from "./support/engine.js";
import { createAccount, execution, startFlowlog, type TestFlowlog } from "./support/flowlog.js";
import { type PostingUpstream, startPostingUpstream } from "./support/posting-workflow.js";
import { until } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `bulk-${randomUUID()}`;

let flowlog: TestFlowlog;
const workers: RunningWorker[] = [];
/** The upstream the workflows' HTTP block calls: down for the paths in `down`, up for the others. */
let upstream: PostingUpstream;

beforeAll(async () => {
  upstream = await startPostingUpstream();
  flowlog = await startFlowlog({ taskQueue });
  workers.push(await startWorker(temporalServer, testDeps(flowlog.store), taskQueue));
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await flowlog?.close();
  await upstream?.close();
});

/** A new account's posting workflow, its `count` executions logged failed against this file's upstream. */
const outage = (api: string, count: number) => postingOutage(api, flowlog.store, upstream, count);

const bulkRetry = (api: string, { account, workflowId }: Outage, body: Record<string, unknown> = {}) =>
  requestBulkJob(api, account, "retry", { workflowIds: [workflowId], level: "error", ...body });

const retriedOnce = (run: Outage) => expectEachRetriedOnce(flowlog.store, upstream, run);

describe("BulkRetryExecutions (D47): POST /api/v1/workspaces/{workspaceId}/executions:bulkRetry", () => {
  it("the preview counts what the job then retries; each failed execution is retried exactly once", async () => {
    const api = flowlog.server.url;
    const run = await outage(api, 30);

    const preview = await bulkRetry(api, run, { preview: true });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.json).toEqual({ executions: 30 });
    expect(await retriesOf(flowlog.store, run)).toEqual(new Map(run.failed.map((id) => [id, []])));

    const started = await bulkRetry(api, run);
    expect(started.status, started.text).toBe(202);
    const { job } = started.json as { executions: number; job: BulkJobJson };
    expect(started.json).toMatchObject({ executions: 30 });
    expect(job).toMatchObject({
      id: bulkJobWorkflowId("retry", run.account.workspaceId, 1),
      status: "running",
      total: 30,
    });

    const done = await bulkJobEnded(api, run.account, job.id);
    expect(done).toMatchObject({ status: "completed", total: 30, done: 30, failed: 0, processed: 30 });
    await retriedOnce(run);
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

    const done = await bulkJobEnded(api, run.account, job.id);
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
    return flowlog.apiOn(queue);
  }

  it("waits for the caller's empty bucket instead of failing, then goes on to the end", async () => {
    const api = await slowBucket(120);
    const run = await outage(api, 5);

    const started = await bulkRetry(api, run);
    expect(started.status, started.text).toBe(202);
    const { job } = started.json as { job: BulkJobJson };

    const waiting = await until("the job waiting for a token", async () => {
      const read = await bulkJobOf(api, run.account, job.id);
      return read.waitingUntil === undefined ? undefined : read;
    });
    expect(waiting).toMatchObject({ status: "running", failed: 0 });
    expect(waiting.done).toBeLessThan(5);
    const done = await bulkJobEnded(api, run.account, job.id);
    expect(done).toMatchObject({ status: "completed", total: 5, done: 5, failed: 0 });
    expect(done.waitingUntil).toBeUndefined();
    await retriedOnce(run);
  }, 90_000);

  it("CancelBulkJob stops it: no retry starts after, and a second cancel is refused", async () => {
    // One token every 20 s: the job retries one execution, then waits.
    const api = await slowBucket(3);
    const run = await outage(api, 4);
    const started = await bulkRetry(api, run);
    const { job } = started.json as { job: BulkJobJson };
    await until(
      "the job waiting for a token",
      async () => (await bulkJobOf(api, run.account, job.id)).waitingUntil,
    );

    const path = `/api/v1/workspaces/${run.account.workspaceId}/bulk-jobs/${job.id}:cancel`;
    const cancelled = await restWithKey(api, run.account.key, "POST", path, {});
    expect(cancelled.status, cancelled.text).toBe(200);

    const stopped = await bulkJobEnded(api, run.account, job.id, 20_000);
    expect(stopped).toMatchObject({ status: "cancelled", total: 4 });
    expect(stopped.done).toBeLessThan(4);
    const retried = async () =>
      [...(await retriesOf(flowlog.store, run)).values()].filter((r) => r.length > 0).length;
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
    expect(await bulkJobEnded(api, run.account, job.id)).toMatchObject({ status: "completed", done: 1 });
  }, 60_000);
});

describe("A bulk retry job across a worker's death (D47)", () => {
  it("a job of 500 whose worker is SIGKILLed mid-way goes on on another: each execution retried exactly once", async () => {
    // 500 spans three of the job's 200-execution pages.
    // The API's bucket (120 a minute) would pace the 500 starts of the outage for minutes: this API's is
    // wider. The job's retries take from the execution bucket as ever, in the worker.
    const size = 500;
    const queue = `bulk-kill-${randomUUID()}`;
    const wideApi = { ...defaultPlanLimits.enterprise, api: { requestsPerMinute: 6_000, maxBurst: 6_000 } };
    const api = await flowlog.apiOn(queue, { ...defaultPlanLimits, enterprise: wideApi });
    const doomed = await spawnWorkerProcess(temporalServer, queue, flowlog.dataDir, flowlog.env);
    try {
      const run = await outage(api, size);
      const since = Date.now();
      const started = await bulkRetry(api, run);
      expect(started.status, started.text).toBe(202);
      const { job } = started.json as { job: BulkJobJson };
      // Killed past the first page and inside a batch of 20 (its retries' links are written one by one as
      // they start): the batch runs again on the replacement, over retries it had started already.
      const links = async () => {
        const [row] = await flowlog.sql<{ n: number | string }>(
          "SELECT count(*) AS n FROM execution_retries WHERE created_at >= @since",
          { since },
        );
        return Number(row?.n);
      };
      await until(
        "a batch half-way past the first page",
        async () => {
          const n = await links();
          return n > 200 && n % 20 >= 5 ? true : undefined;
        },
        120_000,
      );
      doomed.kill("SIGKILL");
      const linked = [...(await retriesOf(flowlog.store, run)).values()].filter((r) => r.length > 0).length;
      const replacement = await spawnWorkerProcess(temporalServer, queue, flowlog.dataDir, flowlog.env);
      try {
        const done = await bulkJobEnded(api, run.account, job.id, 180_000);
        expect(done).toMatchObject({ status: "completed", total: size, done: size, failed: 0 });
        await retriedOnce(run);
      } finally {
        replacement.kill("SIGTERM");
      }
      // The kill came mid-job: retries were still to start on the replacement.
      expect(linked).toBeLessThan(size);
    } finally {
      doomed.kill("SIGKILL");
    }
  }, 420_000);
});
