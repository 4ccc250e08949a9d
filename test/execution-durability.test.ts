import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { ExecutionRecord } from "../src/store/records.js";
import type { Store } from "../src/store/store.js";
import { deliveryTaskQueue, testDeliveryWorkflowId } from "../src/temporal/delivery-ids.js";
import { newId } from "../src/util/ids.js";
import { EngineHarness, spawnWorkerProcess, startWorker, testDeps } from "./support/engine.js";
import { subscribeWebhook } from "./support/flowlog.js";
import { type HttpReceiver, sendJson, startReceiver } from "./support/http-receiver.js";
import { untilTrue } from "./support/until.js";

const temporal = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };

let harness: EngineHarness;
const receivers: HttpReceiver[] = [];

beforeAll(async () => {
  // A worker killed during a first try (a local activity) is replaced once its workflow task times out,
  // and a cancellation during one arrives at the task's heartbeat, at 80 % of it: the promises below
  // wait for either, never for its length, so 3 s instead of Temporal's 10 s.
  harness = await EngineHarness.connect(temporal, { workflowTaskTimeoutMs: 3_000 });
});

afterAll(async () => {
  await harness?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

/** starter -> api (GET url) -> response with the api's data. */
async function callAndRespond(url: string): Promise<string> {
  return await harness.saveWorkflow({
    blocks: {
      start: { type: "starter", name: "Start", config: {}, enabled: true },
      call: { type: "api", name: "Call", config: { method: "GET", url, retries: 0 }, enabled: true },
      done: { type: "response", name: "Done", config: { data: "<call.data>" }, enabled: true },
    },
    edges: [
      { source: "start", target: "call" },
      { source: "call", target: "done" },
    ],
  });
}

describe("Logs: exactly one log entry per execution (D17)", () => {
  it("a log write retried after its acknowledgement was lost still leaves one entry", async () => {
    let attempts = 0;
    // The write commits, then the worker fails before reporting it: Temporal runs the activity again.
    const logs = Object.create(harness.store.logs) as Store["logs"];
    logs.insertExecution = async (record: ExecutionRecord) => {
      const inserted = await harness.store.logs.insertExecution(record);
      attempts++;
      if (attempts === 1) throw new Error("connection lost after commit");
      return inserted;
    };
    const worker = await startWorker(temporal, testDeps({ ...harness.store, logs }));
    try {
      const workflowId = await harness.saveWorkflow({
        blocks: { start: { type: "starter", name: "Start", config: {}, enabled: true } },
      });
      const { result, logged } = await harness.run(worker.taskQueue, workflowId, { hello: "world" });

      expect(attempts).toBe(2);
      expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
      expect(logged.entry).toMatchObject({ id: result.logId, finalOutput: { hello: "world" } });
    } finally {
      await worker.stop();
    }
  });

  it("a worker killed during a request is replaced and the execution finishes with one entry", async () => {
    const api = await startReceiver((_, response, index) => {
      // The first request never gets an answer: its worker is killed while waiting for it.
      if (index > 0) sendJson(response, 200, { answeredAttempt: index + 1 });
    });
    receivers.push(api);
    const taskQueue = `engine-kill-${Date.now()}`;
    const doomed = await spawnWorker(taskQueue);
    const handle = await harness.start(taskQueue, await callAndRespond(`${api.origin}/slow`));
    await untilTrue(() => api.received.length === 1, 20_000);

    doomed.kill("SIGKILL");
    await once(doomed, "exit");
    const replacement = await startWorker(temporal, testDeps(harness.store), taskQueue);
    try {
      const result = await handle.result();

      expect(result).toMatchObject({ status: "success", output: { data: { answeredAttempt: 2 } } });
      expect(api.received).toHaveLength(2);
      expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
      expect((await harness.logged(result)).entry.level).toBe("info");
    } finally {
      await replacement.stop();
    }
  });
});

describe("A killed worker loses nothing on the delivery path either (issue 12, D19)", () => {
  it("SIGKILL during a block and again during its webhook: one entry, and the event arrives, same ids", async () => {
    const upstream = await startReceiver((_, response, index) => {
      if (index > 0) sendJson(response, 200, { answeredAttempt: index + 1 });
    });
    const hook = await startReceiver((_, response, index) => {
      if (index > 0) sendJson(response, 200, { ok: true });
    });
    receivers.push(upstream, hook);
    const subscriptionId = await subscribeWebhook(harness.store, harness.account.workspaceId, hook.origin);
    const taskQueue = `engine-kill-delivery-${Date.now()}`;
    const duringBlock = await spawnWorker(taskQueue);
    const handle = await harness.start(taskQueue, await callAndRespond(`${upstream.origin}/slow`));
    await untilTrue(() => upstream.received.length === 1, 20_000);
    duringBlock.kill("SIGKILL");
    await once(duringBlock, "exit");

    const duringDelivery = await spawnWorker(taskQueue);
    const result = await handle.result();
    expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
    // The first delivery attempt is held by the receiver when its worker dies.
    await untilTrue(() => hook.received.length === 1, 30_000);
    duringDelivery.kill("SIGKILL");
    await once(duringDelivery, "exit");

    const replacement = await startWorker(temporal, testDeps(harness.store), taskQueue);
    try {
      await untilTrue(async () => (await deliveryOf(subscriptionId))?.status === "succeeded", 60_000);
    } finally {
      await replacement.stop();
    }
    const delivery = await deliveryOf(subscriptionId);
    const ids = hook.received.map((r) => [r.headers["service-delivery-id"], r.headers["idempotency-key"]]);
    expect(ids).toEqual([
      [delivery?.id, delivery?.id],
      [delivery?.id, delivery?.id],
    ]);
    expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
  }, 120_000);

  it("a test send whose only attempt dies with its worker ends failed, never pending", async () => {
    const hook = await startReceiver(() => {});
    receivers.push(hook);
    const subscriptionId = await subscribeWebhook(harness.store, harness.account.workspaceId, hook.origin);
    const delivery = await harness.store.deliveries.createOnce({
      id: newId("dlv"),
      eventId: newId("evt"),
      eventType: "workflow.execution.completed",
      subscriptionId,
      workspaceId: harness.account.workspaceId,
      logId: null,
      event: { id: "evt_lost", type: "workflow.execution.completed", timestamp: Date.now(), data: {} },
      createdAt: Date.now(),
    });
    const taskQueue = `engine-kill-test-send-${Date.now()}`;
    const doomed = await spawnWorker(taskQueue);
    const handle = await harness.client.workflow.start("deliverNotification", {
      workflowId: testDeliveryWorkflowId(delivery.id),
      taskQueue: deliveryTaskQueue(taskQueue),
      args: [{ deliveryId: delivery.id, series: 1, once: true }],
    });
    await untilTrue(() => hook.received.length === 1, 20_000);
    // The attempt is known to have started once its first heartbeat has reached Temporal; a worker killed
    // before that (a loaded machine) leaves an attempt no one can tell from one never made, and it is sent
    // again. This case is the other: a started attempt lost.
    await untilTrue(async () => {
      const { raw } = await handle.describe();
      return (raw.pendingActivities ?? []).some((activity) => activity.heartbeatDetails?.payloads?.length);
    }, 20_000);
    doomed.kill("SIGKILL");
    await once(doomed, "exit");
    const replacement = await startWorker(temporal, testDeps(harness.store), taskQueue);
    try {
      expect(await handle.result()).toEqual({ deliveryId: delivery.id, series: 1, status: "failed" });
    } finally {
      await replacement.stop();
    }
    expect(await harness.store.deliveries.get(delivery.id)).toMatchObject({ status: "failed" });
    expect((await harness.store.deliveries.attemptsOf(delivery.id)).at(-1)).toMatchObject({
      outcome: "failed",
      error: expect.stringContaining("lost"),
    });
  }, 120_000);
});

async function deliveryOf(subscriptionId: string) {
  return (
    await harness.store.deliveries.list({ workspaceId: harness.account.workspaceId, subscriptionId }, 10)
  ).at(0);
}

describe("Logs: a cancelled execution is logged too (D17)", () => {
  it("cancelling during a request ends the execution as an error with its one entry", async () => {
    const api = await startReceiver(() => {});
    receivers.push(api);
    const worker = await startWorker(temporal, testDeps(harness.store));
    try {
      const handle = await harness.start(worker.taskQueue, await callAndRespond(`${api.origin}/never`));
      await untilTrue(() => api.received.length === 1, 20_000);
      await handle.cancel();
      const result = await handle.result();

      expect(result).toMatchObject({
        status: "error",
        httpStatus: 500,
        // D47: the entry says cancelled (without a reason: Temporal's own cancel gives none).
        error: "cancelled",
      });
      expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
      expect((await harness.logged(result)).entry.level).toBe("error");
    } finally {
      await worker.stop();
    }
  });
});

const spawnWorker = (taskQueue: string) => spawnWorkerProcess(temporal, taskQueue, harness.dataDir);
