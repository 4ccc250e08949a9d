import { setImmediate } from "node:timers/promises";
import { Code } from "@connectrpc/connect";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LogsService } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { deleteLogsPerCall } from "../src/services/logs/delete-logs.js";
import type { ExecutionRecord } from "../src/store/records.js";
import { newId } from "../src/util/ids.js";
import { clientWithKey, type RestResponse, restWithKey, rpcError } from "./support/api-server.js";
import {
  createAccount,
  createWorkflow,
  execution,
  startFlowlog,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";

/** The API's info lines, as an operator's log collector reads them. */
const lines: Record<string, unknown>[] = [];
const auditLog = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });

let flowlog: TestFlowlog;
let alice: TestAccount;
let bob: TestAccount;
let workflow: string;
let other: string;
let subscription: string;
const t0 = Date.parse("2026-11-01T00:00:00.000Z");
const minute = 60_000;

beforeAll(async () => {
  flowlog = await startFlowlog({ logger: auditLog });
  alice = await createAccount(flowlog.store, "pro");
  bob = await createAccount(flowlog.store, "pro");
  workflow = await createWorkflow(flowlog.store, alice.workspaceId, "Nightly report");
  other = await createWorkflow(flowlog.store, alice.workspaceId, "Hourly sync");
  subscription = await subscribeWebhook(flowlog.store, alice.workspaceId, "https://hooks.example.test/in");
});
afterAll(() => flowlog.close());

const deleteRest = (account: TestAccount | null, workspaceId: string, body: object): Promise<RestResponse> =>
  restWithKey(
    flowlog.server.url,
    account?.key ?? null,
    "POST",
    `/api/v1/workspaces/${workspaceId}/logs:delete`,
    body,
  );

/** Entries of Alice's workspace, each with a delivered notification of two attempts. */
async function logged(count: number, overrides: Partial<ExecutionRecord["entry"]> = {}, on = workflow) {
  const records = Array.from({ length: count }, (_, i) =>
    execution(alice, on, { startedAt: t0 + i * minute, ...overrides }),
  );
  await flowlog.store.logs.insertExecutions(records);
  for (const { entry } of records) {
    const delivery = await flowlog.store.deliveries.createOnce({
      id: newId("dlv"),
      eventId: newId("evt"),
      eventType: "workflow.execution.completed",
      workspaceId: alice.workspaceId,
      subscriptionId: subscription,
      logId: entry.id,
      event: { id: newId("evt"), type: "workflow.execution.completed", timestamp: entry.endedAt, data: {} },
      createdAt: entry.endedAt,
    });
    for (const attempt of [1, 2]) {
      await flowlog.store.deliveries.recordAttempt(
        {
          deliveryId: delivery.id,
          series: 1,
          attempt,
          startedAt: entry.endedAt,
          durationMs: 3,
          outcome: attempt === 2 ? "succeeded" : "retrying",
          httpStatus: attempt === 2 ? 200 : 503,
          responseSnippet: "",
          error: null,
        },
        attempt === 2 ? "succeeded" : "pending",
      );
    }
  }
  return records.map((r) => r.entry);
}

async function listed(workspaceId = alice.workspaceId): Promise<string[]> {
  const response = await restWithKey(
    flowlog.server.url,
    workspaceId === alice.workspaceId ? alice.key : bob.key,
    "GET",
    `/api/v1/logs?workspaceId=${workspaceId}&limit=1000&order=asc`,
  );
  return (response.json as { data: { id: string }[] }).data.map((e) => e.id);
}

async function clear() {
  await deleteRest(alice, alice.workspaceId, { endDate: "2100-01-01" });
}

describe("DeleteLogs: POST /api/v1/workspaces/{workspaceId}/logs:delete (D43)", () => {
  beforeEach(clear);

  it("deletes the named executions with their deliveries and attempts, and answers what went", async () => {
    const entries = await logged(3);
    const usageBefore = (await deleteRest(alice, alice.workspaceId, { endDate: "2000-01-01", preview: true }))
      .json as { limits: unknown };
    const response = await deleteRest(alice, alice.workspaceId, {
      executionIds: [entries[0]?.executionId, entries[2]?.executionId],
    });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      entries: 2,
      // Every entry ran the workflow's one state, which the third still uses.
      snapshots: 0,
      deliveries: 2,
      deliveryAttempts: 4,
      remaining: 0,
    });
    expect(await listed()).toEqual([entries[1]?.id]);
    const gone = await restWithKey(flowlog.server.url, alice.key, "GET", `/api/v1/logs/${entries[0]?.id}`);
    expect(gone.status).toBe(404);
    const deliveries = await flowlog.store.deliveries.list(
      { workspaceId: alice.workspaceId, subscriptionId: subscription },
      100,
    );
    expect(deliveries.map((d) => d.logId)).toEqual([entries[1]?.id]);
    // Usage is what was billed, not what is kept (D41, D12).
    expect((response.json as { limits: { usage: unknown } }).limits.usage).toEqual(
      (usageBefore.limits as { usage: unknown }).usage,
    );
  });

  it("by ListLogs' filters; a preview counts and deletes nothing", async () => {
    const nightly = await logged(4);
    const hourly = await logged(2, { level: "error" }, other);
    const filters = {
      workflowIds: [workflow],
      startDate: "2026-11-01T00:01:00Z",
      endDate: "2026-11-01T00:02:00Z",
    };
    const preview = await deleteRest(alice, alice.workspaceId, { ...filters, preview: true });
    expect(preview.json).toMatchObject({ entries: 2, snapshots: 0, deliveries: 0, remaining: 0 });
    expect(await listed()).toHaveLength(6);

    expect((await deleteRest(alice, alice.workspaceId, filters)).json).toMatchObject({ entries: 2 });
    const left = [nightly[0], hourly[0], hourly[1], nightly[3]].map((e) => e?.id);
    expect((await listed()).sort()).toEqual(left.sort());
    expect((await deleteRest(alice, alice.workspaceId, { level: "error" })).json).toMatchObject({
      entries: 2,
    });
    expect((await listed()).sort()).toEqual([nightly[0]?.id, nightly[3]?.id].sort());
  });

  it("through a generated client (Connect), with the same answer", async () => {
    const entries = await logged(2);
    const client = clientWithKey(LogsService, flowlog.server.url, alice.key);
    const preview = await client.deleteLogs({
      workspaceId: alice.workspaceId,
      workflowIds: [workflow],
      preview: true,
    });
    expect(preview.entries).toBe(2);
    const answer = await client.deleteLogs({
      workspaceId: alice.workspaceId,
      executionIds: entries.map((e) => e.executionId),
    });
    expect(answer).toMatchObject({ entries: 2, deliveries: 2, deliveryAttempts: 4, remaining: 0 });
    expect(answer.limits?.usage?.plan).toBe("pro");
    expect(await listed()).toEqual([]);
  });

  it("a call deletes at most its bound and says how many remain; the next call finishes", async () => {
    const total = deleteLogsPerCall + 30;
    // In batches, with the event loop let run between them: the server and this client share it, and one
    // insert of 10,030 (synchronous on SQLite) held it past both ends' keep-alive timeouts under a loaded
    // suite, so fetch took a pooled connection in the same turn as the server's timer closed it (ECONNRESET).
    for (let from = 0; from < total; from += 1_000) {
      const batch = Array.from({ length: Math.min(1_000, total - from) }, (_, i) =>
        execution(alice, workflow, { startedAt: t0 + from + i }),
      );
      await flowlog.store.logs.insertExecutions(batch);
      await setImmediate();
    }
    const first = await deleteRest(alice, alice.workspaceId, { workflowIds: [workflow] });
    expect(first.json).toMatchObject({ entries: deleteLogsPerCall, remaining: 30 });
    const second = await deleteRest(alice, alice.workspaceId, { workflowIds: [workflow] });
    expect(second.json).toMatchObject({ entries: 30, remaining: 0 });
  });

  it("leaves an info line naming who asked, the workspace, the selection and what went, never the key", async () => {
    const entries = await logged(1);
    lines.length = 0;
    await deleteRest(alice, alice.workspaceId, { executionIds: [entries[0]?.executionId] });
    await deleteRest(alice, alice.workspaceId, { workflowIds: [workflow], level: "info", preview: true });
    const audit = lines.filter((line) => String(line.msg).startsWith("DeleteLogs"));
    expect(audit).toEqual([
      expect.objectContaining({
        level: 30,
        userId: alice.userId,
        keyId: alice.keyId,
        workspaceId: alice.workspaceId,
        selection: { executionIds: 1 },
        entries: 1,
        deliveries: 1,
        remaining: 0,
      }),
      expect.objectContaining({
        userId: alice.userId,
        selection: { workflowIds: [workflow], level: "info" },
        preview: true,
        entries: 0,
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(alice.key);
  });
});

describe("DeleteLogs refuses what it must not do (D10, D43)", () => {
  it("another workspace: 403, and its entries stay", async () => {
    const bobs = execution(bob, await createWorkflow(flowlog.store, bob.workspaceId, "Bob's"), {
      startedAt: t0,
    });
    await flowlog.store.logs.insertExecution(bobs);
    const response = await deleteRest(alice, bob.workspaceId, { executionIds: [bobs.entry.executionId] });
    expect(response.status).toBe(403);
    expect(await listed(bob.workspaceId)).toEqual([bobs.entry.id]);
    // Named in Alice's own workspace, Bob's execution is simply not there.
    const mine = await deleteRest(alice, alice.workspaceId, { executionIds: [bobs.entry.executionId] });
    expect(mine.json).toMatchObject({ entries: 0 });
    expect(await listed(bob.workspaceId)).toEqual([bobs.entry.id]);
  });

  it("no key: 401", async () => {
    expect((await deleteRest(null, alice.workspaceId, { endDate: "2100-01-01" })).status).toBe(401);
  });

  it.each([
    [{}, "executionIds", "executionIds or at least one filter is required"],
    [{ executionIds: ["ex_1"], level: "error" }, "executionIds", "cannot be combined with filters (level)"],
    [{ level: "fatal" }, "level", "level"],
    [{ endDate: "2026-02-30" }, "endDate", "endDate"],
    [{ triggers: ["api", "cron"] }, "triggers", "triggers"],
    [{ minCost: -1 }, "minCost", "minCost"],
    [{ executionIds: [""] }, "executionIds", "executionIds"],
    [{ executionIds: Array.from({ length: 101 }, (_, i) => `ex_${i}`) }, "executionIds", "at most 100"],
  ])("%j: 400 naming %s", async (body, field, message) => {
    const response = await deleteRest(alice, alice.workspaceId, body);
    expect(response.status).toBe(400);
    const problem = response.json as { code: string; errors: { field: string; message: string }[] };
    expect(problem.code).toBe("invalid_argument");
    expect(problem.errors.map((e) => e.field.replace(/\[\d+\]$/, ""))).toContain(field);
    expect(JSON.stringify(problem.errors)).toContain(message);
  });

  it("through a generated client, a refusal has the matching code", async () => {
    const client = clientWithKey(LogsService, flowlog.server.url, alice.key);
    const error = await rpcError(() => client.deleteLogs({ workspaceId: alice.workspaceId }));
    expect(error.code).toBe(Code.InvalidArgument);
  });
});
