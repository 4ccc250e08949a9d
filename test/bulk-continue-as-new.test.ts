import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client, Connection } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTemporalDevServer, type TemporalDevServer } from "../src/temporal/dev/dev-server.js";
import { freeListeningPort } from "../src/util/free-port.js";
import {
  type BulkJobJson,
  bulkJobEnded,
  entriesOf,
  expectEachRetriedOnce,
  postingOutage,
  requestBulkJob,
} from "./support/bulk-jobs.js";
import { type RunningWorker, spawnWorkerProcess, startWorker, testDeps } from "./support/engine.js";
import { createAccount, startFlowlog, type TestAccount, type TestFlowlog } from "./support/flowlog.js";
import {
  heldPostingRuns,
  type PostingUpstream,
  type PostingWorkflow,
  savePostingWorkflow,
  startPostingUpstream,
} from "./support/posting-workflow.js";
import { until, untilApi } from "./support/until.js";

/**
 * D47's bulk jobs continue as new after 2,000 executions, or sooner when Temporal suggests it, carrying
 * their progress: the counts, a retry's page key, a cancel's ids still to cancel. On a Temporal server of
 * this file's own that suggests it at every workflow task, as a server with a low
 * `limit.historyCount.suggestContinueAsNew` does, a job of a few dozen executions goes on in a new run
 * after each batch, so what each run hands the next decides what the job does.
 */
let temporalDir: string;
let temporal: TemporalDevServer;
let temporalServer: { address: string; namespace: string };
let connection: Connection;
let client: Client;
const taskQueue = `bulk-can-${randomUUID()}`;
let flowlog: TestFlowlog;
let worker: RunningWorker;
let upstream: PostingUpstream;

beforeAll(async () => {
  temporalDir = await mkdtemp(path.join(os.tmpdir(), "flowlog-temporal-can-"));
  temporal = await startTemporalDevServer({
    dataDir: temporalDir,
    persistence: "memory",
    namespace: "default",
    port: await freeListeningPort(),
    headless: true,
    dynamicConfig: { "limit.historyCount.suggestContinueAsNew": 1 },
  });
  temporalServer = { address: temporal.address, namespace: "default" };
  connection = await Connection.connect({ address: temporal.address });
  client = new Client({ connection, namespace: temporalServer.namespace });
  upstream = await startPostingUpstream();
  flowlog = await startFlowlog({ taskQueue, temporalServer });
  worker = await startWorker(temporalServer, testDeps(flowlog.store), taskQueue);
});

afterAll(async () => {
  // First: the calls it holds answered, the worker has none left in flight to wait for as it stops.
  await upstream?.close();
  await worker?.stop();
  await flowlog?.close();
  await connection?.close();
  await temporal?.stop();
  if (temporalDir) await rm(temporalDir, { recursive: true, force: true });
});

/** Once the job has ended: each of its runs but the last closed as continued as new. How many there were. */
async function expectContinuedAsNew(jobId: string): Promise<number> {
  // Visibility follows a run's close by a moment.
  const statuses = await until(`the runs of ${jobId} closed`, async () => {
    const runs: { startTime: Date; status: string }[] = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${jobId}'` })) {
      runs.push({ startTime: run.startTime, status: run.status.name });
    }
    runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    return runs.at(-1)?.status === "COMPLETED" ? runs.map((run) => run.status) : undefined;
  });
  expect(statuses.slice(0, -1)).toEqual(statuses.slice(0, -1).map(() => "CONTINUED_AS_NEW"));
  return statuses.length - 1;
}

/** A new account's posting workflow, `count` executions of it running, held in their HTTP block. */
async function runningExecutions(api: string, count: number) {
  const account = await createAccount(flowlog.store);
  const workflow = await savePostingWorkflow(api, account, upstream.origin, `/held-${randomUUID()}`);
  const ids = await heldPostingRuns(api, account, upstream, workflow, count);
  // Temporal's visibility, which the job selects in, follows a start by a moment.
  await untilApi(`the preview counting ${count}`, async () =>
    (await runningPreview(api, account, workflow)) === count ? true : undefined,
  );
  return { account, workflow, ids };
}

const bulkCancel = (api: string, account: TestAccount, { workflowId }: PostingWorkflow, reason: string) =>
  requestBulkJob(api, account, "cancel", { workflowIds: [workflowId], reason });

/** The workflow's executions running now, as the bulk cancel's preview counts them. */
async function runningPreview(api: string, account: TestAccount, { workflowId }: PostingWorkflow) {
  const preview = await requestBulkJob(api, account, "cancel", { workflowIds: [workflowId], preview: true });
  expect(preview.status, preview.text).toBe(200);
  return (preview.json as { executions: number }).executions;
}

/** Once none of the workflow's executions runs: each of `ids` logged once, level error, cancelled. */
async function expectEachCancelledOnce(
  api: string,
  account: TestAccount,
  workflow: PostingWorkflow,
  ids: string[],
  reason: string,
): Promise<void> {
  await untilApi("none left running", async () =>
    (await runningPreview(api, account, workflow)) === 0 ? true : undefined,
  );
  const entries = await until("every cancelled execution logged", async () => {
    const found = await entriesOf(flowlog.store, account, workflow.workflowId);
    return found.length >= ids.length ? found : undefined;
  });
  expect(entries.map((entry) => entry.executionId).sort()).toEqual([...ids].sort());
  for (const entry of entries) {
    expect(entry.level, entry.executionId).toBe("error");
    expect(JSON.parse(entry.finalOutputJson ?? "null"), entry.executionId).toEqual({
      error: "cancelled",
      reason,
    });
  }
}

describe("A bulk job across continue-as-new (D47)", () => {
  it("a bulk retry carries its counts and its page from run to run: each failed execution retried exactly once", async () => {
    const api = flowlog.server.url;
    const run = await postingOutage(api, flowlog.store, upstream, 80);

    const started = await requestBulkJob(api, run.account, "retry", {
      workflowIds: [run.workflowId],
      level: "error",
    });
    expect(started.status, started.text).toBe(202);
    const { job } = started.json as { job: BulkJobJson };

    const done = await bulkJobEnded(api, run.account, job.id);
    expect(done).toMatchObject({ status: "completed", total: 80, done: 80, failed: 0, processed: 80 });
    expect(await expectContinuedAsNew(job.id)).toBeGreaterThanOrEqual(3);
    await expectEachRetriedOnce(flowlog.store, upstream, run);
  }, 90_000);

  it("a bulk cancel carries its counts and the ids still to cancel from run to run: each cancelled exactly once", async () => {
    const api = flowlog.server.url;
    const { account, workflow, ids } = await runningExecutions(api, 80);

    const started = await bulkCancel(api, account, workflow, "upstream stuck");
    expect(started.status, started.text).toBe(202);
    const { job } = started.json as { job: BulkJobJson };

    const done = await bulkJobEnded(api, account, job.id);
    expect(done).toMatchObject({ status: "completed", total: 80, done: 80, failed: 0, processed: 80 });
    expect(await expectContinuedAsNew(job.id)).toBeGreaterThanOrEqual(3);
    await expectEachCancelledOnce(api, account, workflow, ids, "upstream stuck");
  }, 90_000);
});

describe("A bulk cancel across a worker's death (D47)", () => {
  it("a job whose worker is SIGKILLed mid-way goes on on another: each execution cancelled exactly once", async () => {
    const queue = `bulk-can-kill-${randomUUID()}`;
    const api = await flowlog.apiOn(queue);
    const doomed = await spawnWorkerProcess(temporalServer, queue, flowlog.dataDir, flowlog.env);
    try {
      const { account, workflow, ids } = await runningExecutions(api, 60);
      const started = await bulkCancel(api, account, workflow, "worker lost");
      expect(started.status, started.text).toBe(202);
      const { job } = started.json as { job: BulkJobJson };
      await until("its first cancel logged", async () =>
        (await entriesOf(flowlog.store, account, workflow.workflowId)).length > 0 ? true : undefined,
      );
      doomed.kill("SIGKILL");
      // Mid-way: the job was still running when its one worker died, so the rest is the replacement's.
      expect((await client.workflow.getHandle(job.id).describe()).status.name).toBe("RUNNING");
      const replacement = await spawnWorkerProcess(temporalServer, queue, flowlog.dataDir, flowlog.env);
      try {
        // A cancel the lost batch had asked for after its last recorded heartbeat is asked again: one whose
        // execution ended meanwhile is counted failed rather than done (D47), but every execution is
        // counted once.
        expect(await bulkJobEnded(api, account, job.id, 90_000)).toMatchObject({
          status: "completed",
          total: 60,
          processed: 60,
        });
        expect(await expectContinuedAsNew(job.id)).toBeGreaterThanOrEqual(1);
        await expectEachCancelledOnce(api, account, workflow, ids, "worker lost");
      } finally {
        replacement.kill("SIGTERM");
      }
    } finally {
      doomed.kill("SIGKILL");
    }
  }, 120_000);
});
