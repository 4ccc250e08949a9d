import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { logIdOf } from "../src/temporal/activities/execution-activities.js";
import { bulkJobWorkflowId } from "../src/temporal/bulk-job-ids.js";
import { restWithKey } from "./support/api-server.js";
import { type BulkJobJson, bulkJobEnded, entriesOf, requestBulkJob } from "./support/bulk-jobs.js";
import { type RunningWorker, startWorker, testDeps } from "./support/engine.js";
import {
  createAccount,
  startFlowlog,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { sendJson, startReceiver } from "./support/http-receiver.js";
import {
  heldPostingRuns,
  type PostingUpstream,
  type PostingWorkflow,
  savePostingWorkflow,
  startOrder,
  startPostingUpstream,
} from "./support/posting-workflow.js";
import { until } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `bulk-cancel-${randomUUID()}`;

let flowlog: TestFlowlog;
let worker: RunningWorker;
/** The upstream the workflows' HTTP block calls: it holds the calls to the paths in `held` unanswered. */
let upstream: PostingUpstream;

beforeAll(async () => {
  upstream = await startPostingUpstream();
  flowlog = await startFlowlog({ taskQueue });
  worker = await startWorker(temporalServer, testDeps(flowlog.store), taskQueue);
});

afterAll(async () => {
  // First: the calls it holds answered, the worker has none left in flight to wait for as it stops.
  await upstream?.close();
  await worker?.stop();
  await flowlog?.close();
});

const call = (account: TestAccount, method: string, path: string, body?: unknown) =>
  restWithKey(flowlog.server.url, account.key, method, path, body);

const callingWorkflow = (account: TestAccount) =>
  savePostingWorkflow(flowlog.server.url, account, upstream.origin, `/calls-${randomUUID()}`);

const startAsync = (account: TestAccount, workflowId: string, order: number) =>
  startOrder(flowlog.server.url, account, workflowId, order);

/** Executions of a workflow blocked in its HTTP block: the upstream holds each call. */
async function blocked(account: TestAccount, workflow: PostingWorkflow, count: number) {
  const before = upstream.ordersTo(workflow.path).length;
  const ids = await heldPostingRuns(flowlog.server.url, account, upstream, workflow, count);
  await until(
    "every execution waiting on the upstream",
    () => upstream.ordersTo(workflow.path).length >= before + count || undefined,
  );
  return ids;
}

const workflowEntries = (account: TestAccount, workflowId: string) =>
  entriesOf(flowlog.store, account, workflowId);

const bulkCancel = (account: TestAccount, body: Record<string, unknown>) =>
  requestBulkJob(flowlog.server.url, account, "cancel", body);

const ended = (account: TestAccount, id: string) => bulkJobEnded(flowlog.server.url, account, id);

describe("BulkCancelExecutions (D47): POST /api/v1/workspaces/{workspaceId}/executions:bulkCancel", () => {
  it("the preview counts the running executions; the job cancels each once and leaves the ended and the unselected", async () => {
    const account = await createAccount(flowlog.store);
    const hook = await startReceiver((_, response) => sendJson(response, 200, {}));
    await subscribeWebhook(flowlog.store, account.workspaceId, `${hook.origin}/hook`, {
      include: { finalOutput: true, traceSpans: false, rateLimits: false, usage: false },
    });
    const { workflowId, path } = await callingWorkflow(account);
    const other = await callingWorkflow(account);
    const completed = await startAsync(account, workflowId, 99);
    await until("the completed execution logged", async () =>
      (await flowlog.store.logs.getExecution(completed))?.entry.level === "info" ? true : undefined,
    );
    const running = await blocked(account, { workflowId, path }, 3);
    const [unselected] = await blocked(account, other, 1);

    // Temporal's visibility follows a start by a moment.
    const preview = await until("the preview counting the three", async () => {
      const answer = await bulkCancel(account, { workflowIds: [workflowId], preview: true });
      expect(answer.status, answer.text).toBe(200);
      return (answer.json as { executions: number }).executions === 3 ? answer.json : undefined;
    });
    expect(preview).toEqual({ executions: 3 });
    expect(await workflowEntries(account, workflowId)).toHaveLength(1);

    const started = await bulkCancel(account, { workflowIds: [workflowId], reason: "upstream stuck" });
    expect(started.status, started.text).toBe(202);
    const { job } = started.json as { executions: number; job: BulkJobJson };
    expect(started.json).toMatchObject({ executions: 3 });
    expect(job).toMatchObject({
      id: bulkJobWorkflowId("cancel", account.workspaceId, 1),
      kind: "cancel",
      status: "running",
      total: 3,
    });

    const done = await ended(account, job.id);
    expect(done).toMatchObject({
      kind: "cancel",
      status: "completed",
      total: 3,
      done: 3,
      failed: 0,
      processed: 3,
    });
    const entries = await until("the cancelled executions logged", async () => {
      const found = await workflowEntries(account, workflowId);
      return found.length === 4 ? found : undefined;
    });
    // Each once: the completed one as it was, the three cancelled with the reason.
    expect(entries.map((e) => e.executionId).sort()).toEqual([completed, ...running].sort());
    for (const entry of entries) {
      if (entry.executionId === completed) expect(entry.level).toBe("info");
      else {
        expect(entry.level, entry.executionId).toBe("error");
        expect(JSON.parse(entry.finalOutputJson ?? "null")).toEqual({
          error: "cancelled",
          reason: "upstream stuck",
        });
      }
    }
    // Each notified once, the cancelled ones as failures (D47: as CancelExecution's).
    const events = await until("the four notifications", () => {
      const found = hook.received
        .map((r) => (JSON.parse(r.body) as { data: { executionId: string; status: string } }).data)
        .filter((data) => data.executionId === completed || running.includes(data.executionId));
      return found.length >= 4 ? found : undefined;
    });
    expect(events.map((e) => e.executionId).sort()).toEqual([completed, ...running].sort());
    for (const event of events)
      expect(event.status).toBe(event.executionId === completed ? "success" : "error");
    await hook.close();
    // The other workflow's execution was not selected: it still runs, and can be cancelled on its own.
    expect(await workflowEntries(account, other.workflowId)).toEqual([]);
    const own = await call(account, "POST", `/api/v1/executions/${unselected}:cancel`, {});
    expect(own.status, own.text).toBe(202);
    const again = await bulkCancel(account, { workflowIds: [workflowId], preview: true });
    expect(again.json).toEqual({ executions: 0 });
  }, 90_000);

  it("a bulk cancel job is read and refused its cancel once ended, like a bulk retry's; not another workspace's", async () => {
    const account = await createAccount(flowlog.store);
    const { workflowId, path } = await callingWorkflow(account);
    const [execution] = await blocked(account, { workflowId, path }, 1);
    await until("the preview counting it", async () => {
      const answer = await bulkCancel(account, { triggers: ["api"], preview: true });
      return (answer.json as { executions: number }).executions === 1 || undefined;
    });
    const started = await bulkCancel(account, { triggers: ["api"] });
    expect(started.status, started.text).toBe(202);
    const { job } = started.json as { job: BulkJobJson };
    expect(await ended(account, job.id)).toMatchObject({ status: "completed", done: 1 });
    await until("its entry", () => flowlog.store.logs.getExecution(execution as string));
    const entry = await flowlog.store.logs.getEntry(logIdOf(execution as string));
    expect(entry?.finalOutput).toEqual({ error: "cancelled", reason: `bulk job ${job.id}` });

    const cancelPath = `/api/v1/workspaces/${account.workspaceId}/bulk-jobs/${job.id}:cancel`;
    const refused = await call(account, "POST", cancelPath, {});
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json).toMatchObject({ code: "failed_precondition" });
    const bob = await createAccount(flowlog.store);
    const theirs = await call(bob, "GET", `/api/v1/workspaces/${bob.workspaceId}/bulk-jobs/${job.id}`);
    expect(theirs.status, theirs.text).toBe(404);
  }, 60_000);

  it("bad input is invalid_argument naming the field", async () => {
    const account = await createAccount(flowlog.store);
    const badId = await bulkCancel(account, { workflowIds: ["wf' OR 'a'='a"] });
    expect(badId.status, badId.text).toBe(400);
    expect(JSON.stringify(badId.json)).toContain("workflowIds");
    const badDate = await bulkCancel(account, { startDate: "2026-02-30" });
    expect(badDate.status, badDate.text).toBe(400);
    expect(JSON.stringify(badDate.json)).toContain("startDate");
    const badTrigger = await bulkCancel(account, { triggers: ["cron"] });
    expect(badTrigger.status, badTrigger.text).toBe(400);
    expect(JSON.stringify(badTrigger.json)).toContain("triggers");
    const notRunningFilter = await bulkCancel(account, { level: "error" });
    expect(notRunningFilter.status, notRunningFilter.text).toBe(400);
    expect(JSON.stringify(notRunningFilter.json)).toContain("level");
  });
});
