import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Client, Connection } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AlertFiredEvent, AlertResolvedEvent } from "../src/notifications/alert-event.js";
import { deliveryTaskQueue, fanOutWorkflowId } from "../src/temporal/delivery-ids.js";
import { inactivityWatchId } from "../src/temporal/inactivity-ids.js";
import { restoreInactivityWatchers } from "../src/temporal/start-inactivity-watch.js";
import { restWithKey } from "./support/api-server.js";
import { notifyingDeps, type RunningWorker, startWorker } from "./support/engine.js";
import {
  createAccount,
  createWorkflow,
  execution,
  startFlowlog,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { isoMs } from "./support/formats.js";
import { type HttpReceiver, sendJson, startReceiver } from "./support/http-receiver.js";
import { untilTrue } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `no-activity-${randomUUID()}`;
/** D21's hour shrunk to 4 s (the dev server cannot skip time); the 1-hour cooldown shrinks with it. */
const hourMs = 4_000;

let flowlog: TestFlowlog;
let worker: RunningWorker;
let connection: Connection;
let temporal: Client;
let alice: TestAccount;
const receivers: HttpReceiver[] = [];

const workerDeps = () => notifyingDeps(flowlog.store, { alertHourMs: hourMs });

beforeAll(async () => {
  flowlog = await startFlowlog({ taskQueue });
  worker = await startWorker(temporalServer, workerDeps(), taskQueue);
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
  alice = await createAccount(flowlog.store);
});

afterAll(async () => {
  await worker?.stop();
  await connection?.close();
  await flowlog?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver() {
  const arrivals: number[] = [];
  const started = await startReceiver((_, response) => {
    arrivals.push(Date.now());
    sendJson(response, 200, { ok: true });
  });
  receivers.push(started);
  return Object.assign(started, { arrivals });
}

/** A no_activity subscription made over REST, as a user makes it: this is what starts the watcher. */
async function watch(
  workflowId: string,
  url: string,
  thresholdHours: number,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const response = await restWithKey(
    flowlog.server.url,
    alice.key,
    "POST",
    `/api/v1/workspaces/${alice.workspaceId}/notifications`,
    {
      channel: "webhook",
      webhook: { url },
      workflowIds: [workflowId],
      alertRule: { rule: "no_activity", threshold: thresholdHours },
      ...extra,
    },
  );
  expect(response.status, response.text).toBe(200);
  return (response.json as { subscription: { id: string } }).subscription.id;
}

async function disable(subscriptionId: string): Promise<void> {
  const response = await restWithKey(
    flowlog.server.url,
    alice.key,
    "POST",
    `/api/v1/workspaces/${alice.workspaceId}/notifications/${subscriptionId}:disable`,
  );
  expect(response.status, response.text).toBe(200);
}

/** An execution of the workflow is logged now and its notifications fan out, as after any execution. */
async function executionArrives(workflowId: string): Promise<{ logId: string }> {
  const record = execution(alice, workflowId, { startedAt: Date.now() });
  await flowlog.store.logs.insertExecution(record);
  const logId = record.entry.id;
  // The fan-out an execution starts (start-fan-out.ts), here from a client of its own: no eager start.
  await temporal.workflow.execute("fanOutNotifications", {
    workflowId: fanOutWorkflowId(logId),
    taskQueue: deliveryTaskQueue(taskQueue),
    args: [{ logId }],
  });
  return { logId };
}

const eventOf = (target: HttpReceiver, index: number) =>
  JSON.parse(target.received[index]?.body ?? "null") as AlertFiredEvent;

describe("No activity (D21: checked by a durable Temporal timer, not on execution)", () => {
  it("fires one workflow.alert.fired after X hours without an execution, with D21's data", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId, "Nightly export");
    const target = await receiver();
    const createdAt = Date.now();
    await watch(workflowId, target.origin, 0.5);
    await untilTrue(() => target.received.length > 0, 15_000);
    expect(target.arrivals[0]).toBeGreaterThanOrEqual(createdAt + hourMs / 2);
    const event = eventOf(target, 0);
    expect(target.received[0]?.headers["service-event"]).toBe("workflow.alert.fired");
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: "workflow.alert.fired",
      timestamp: expect.any(Number),
      data: {
        workflowId,
        workflowName: "Nightly export",
        alert: {
          rule: "no_activity",
          reason: expect.stringContaining("No execution of Nightly export"),
          threshold: 0.5,
          observed: expect.any(Number),
          windowHours: 0.5,
          firedAt: expect.stringMatching(isoMs),
        },
        lastExecutionAt: null,
      },
    });
    expect(event.data.alert.observed).toBeGreaterThanOrEqual(0.5);
    expect(event.data.alert.firedAt).toBe(new Date(event.timestamp).toISOString());
  });

  it("watches a workflow created after a subscription to all workflows (D18: current and future)", async () => {
    const target = await receiver();
    const subscribed = await restWithKey(
      flowlog.server.url,
      alice.key,
      "POST",
      `/api/v1/workspaces/${alice.workspaceId}/notifications`,
      {
        channel: "webhook",
        webhook: { url: target.origin },
        allWorkflows: true,
        alertRule: { rule: "no_activity", threshold: 0.5 },
      },
    );
    expect(subscribed.status, subscribed.text).toBe(200);
    const created = await restWithKey(
      flowlog.server.url,
      alice.key,
      "POST",
      `/api/v1/workspaces/${alice.workspaceId}/workflows`,
      {
        name: "Created later",
        state: {
          blocks: { start: { type: "starter", name: "Start" } },
          edges: [],
        },
      },
    );
    expect(created.status, created.text).toBe(200);
    const laterId = (created.json as { workflow: { id: string } }).workflow.id;
    await untilTrue(
      () => target.received.some((r) => JSON.parse(r.body).data.workflowId === laterId),
      15_000,
    );
    await restWithKey(
      flowlog.server.url,
      alice.key,
      "POST",
      `/api/v1/workspaces/${alice.workspaceId}/notifications/${(subscribed.json as { subscription: { id: string } }).subscription.id}:disable`,
      {},
    );
  });

  it("stays silent while executions keep arriving, and fires once they stop", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    // X of a whole (test) hour: the executions' quarter-hour cadence stays under it even when a loaded
    // machine stalls this process for seconds (each insert commits with an fsync, D23).
    await watch(workflowId, target.origin, 1);
    let lastStartedAt = 0;
    // One execution every quarter of X, for three times X: the silence never reaches X.
    for (let i = 0; i < 12; i++) {
      lastStartedAt = Date.now();
      await flowlog.store.logs.insertExecution(execution(alice, workflowId, { startedAt: lastStartedAt }));
      await sleep(hourMs / 4);
    }
    expect(target.received).toHaveLength(0);
    await untilTrue(() => target.received.length > 0, 15_000);
    expect(target.arrivals[0]).toBeGreaterThanOrEqual(lastStartedAt + hourMs);
    expect(eventOf(target, 0).data.lastExecutionAt).toBe(new Date(lastStartedAt).toISOString());
  });

  it("D34: while its alert is open, silence alone never alerts again, even after the hour", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    const subscriptionId = await watch(workflowId, target.origin, 0.25);
    await untilTrue(() => target.received.length > 0, 15_000);
    // Before D34 the silence alerted again once the hour was over; now only an execution ends the alert.
    await sleep(hourMs * 1.5);
    expect(target.received).toHaveLength(1);
    await disable(subscriptionId);
  });

  it("D34: an execution resolves the alert at once, and the next silence alerts an hour after the last (D21)", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    const subscriptionId = await watch(workflowId, target.origin, 0.25);
    await untilTrue(() => target.received.length > 0, 15_000);
    const { logId } = await executionArrives(workflowId);
    await untilTrue(() => target.received.length > 1, 15_000);
    const resolved = JSON.parse(target.received[1]?.body ?? "null") as AlertResolvedEvent;
    expect(target.received[1]?.headers["service-event"]).toBe("workflow.alert.resolved");
    expect(resolved.data).toMatchObject({
      workflowId,
      alert: {
        rule: "no_activity",
        eventId: eventOf(target, 0).id,
        firedAt: eventOf(target, 0).data.alert.firedAt,
      },
      resolution: { reason: expect.stringMatching(/^An execution arrived/), logId },
    });
    // Not held back by the cooldown: it came with the execution, well within the hour of the alert.
    expect((target.arrivals[1] ?? 0) - (target.arrivals[0] ?? 0)).toBeLessThan(hourMs);
    // The silence after the execution is complete a quarter of an hour later, the cooldown only after an hour.
    await untilTrue(() => target.received.length > 2, 15_000);
    expect(eventOf(target, 2).type).toBe("workflow.alert.fired");
    // Measured between the firings, as the cooldown is: arrivals add each delivery's own latency.
    const firedAt = (index: number) => Date.parse(eventOf(target, index).data.alert.firedAt);
    expect(firedAt(2) - firedAt(0)).toBeGreaterThanOrEqual(hourMs);
    await disable(subscriptionId);
  });

  it("D38: a subscription that does not take workflow.alert.fired is sent no firing, which still counts: the execution that ends it sends the resolution", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    const subscriptionId = await watch(workflowId, target.origin, 0.25, {
      eventTypes: ["workflow.alert.resolved"],
    });
    await untilTrue(
      async () => (await flowlog.store.alerts.state(subscriptionId, workflowId)) !== undefined,
      15_000,
    );
    expect(await flowlog.store.alerts.state(subscriptionId, workflowId)).toMatchObject({ status: "firing" });
    // Well past a second firing's due time, had the watcher not counted the first.
    await sleep(hourMs / 2);
    expect(target.received).toHaveLength(0);
    await executionArrives(workflowId);
    await untilTrue(() => target.received.length > 0, 15_000);
    expect(target.received.map((request) => request.headers["service-event"])).toEqual([
      "workflow.alert.resolved",
    ]);
    await disable(subscriptionId);
  });

  it("stops watching when the subscription is disabled", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    const subscriptionId = await watch(workflowId, target.origin, 0.25);
    const disabled = await restWithKey(
      flowlog.server.url,
      alice.key,
      "POST",
      `/api/v1/workspaces/${alice.workspaceId}/notifications/${subscriptionId}:disable`,
    );
    expect(disabled.status, disabled.text).toBe(200);
    await temporal.workflow.getHandle(inactivityWatchId(subscriptionId, workflowId)).result();
    expect(target.received).toHaveLength(0);
  });

  it("stops watching a workflow the subscription no longer selects, without alerting on it", async () => {
    const dropped = await createWorkflow(flowlog.store, alice.workspaceId);
    const kept = await createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    const subscriptionId = await watch(dropped, target.origin, 0.25);
    const subscription = `/api/v1/workspaces/${alice.workspaceId}/notifications/${subscriptionId}`;
    const reselected = await restWithKey(flowlog.server.url, alice.key, "PATCH", subscription, {
      workflowIds: [kept],
    });
    expect(reselected.status, reselected.text).toBe(200);
    await temporal.workflow.getHandle(inactivityWatchId(subscriptionId, dropped)).result();
    const alerted = target.received.map((_, index) => eventOf(target, index).data.workflowId);
    expect(alerted).not.toContain(dropped);
    // The kept workflow's watcher would go on alerting every (scaled) hour: end it with the subscription.
    await restWithKey(flowlog.server.url, alice.key, "POST", `${subscription}:disable`);
  });

  it("survives a worker restart: the timer is Temporal's, and a new worker fires it", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    await watch(workflowId, target.origin, 0.5);
    await sleep(hourMs / 8);
    await worker.stop();
    await sleep(hourMs * 0.75);
    expect(target.received).toHaveLength(0);
    worker = await startWorker(temporalServer, workerDeps(), taskQueue);
    await untilTrue(() => target.received.length > 0, 20_000);
    expect(eventOf(target, 0).data.workflowId).toBe(workflowId);
    await sleep(hourMs / 4);
    expect(target.received).toHaveLength(1);
  });
});

describe("Watchers come back when a worker starts (issue 18, item 4)", () => {
  it("a watcher an operator terminated runs again after a worker restart and fires; a running one is left as it is", async () => {
    const lost = await createWorkflow(flowlog.store, alice.workspaceId);
    const kept = await createWorkflow(flowlog.store, alice.workspaceId);
    const lostTarget = await receiver();
    const keptTarget = await receiver();
    const watchedAt = Date.now();
    const lostSubscription = await watch(lost, lostTarget.origin, 0.75);
    const keptSubscription = await watch(kept, keptTarget.origin, 5);
    const lostWatcher = temporal.workflow.getHandle(inactivityWatchId(lostSubscription, lost));
    const keptWatcher = temporal.workflow.getHandle(inactivityWatchId(keptSubscription, kept));
    const keptRun = (await keptWatcher.describe()).runId;
    await lostWatcher.terminate("an operator's mistake");
    expect((await lostWatcher.describe()).status.name).toBe("TERMINATED");

    await worker.stop();
    worker = await startWorker(temporalServer, workerDeps(), taskQueue);
    const deadline = Date.now() + 15_000;
    while ((await lostWatcher.describe()).status.name !== "RUNNING") {
      if (Date.now() > deadline) throw new Error("the terminated watcher was not started again");
      await sleep(100);
    }
    expect((await keptWatcher.describe()).runId).toBe(keptRun);

    // The silence is counted from when the watch began, not from the restore.
    await untilTrue(() => lostTarget.received.length > 0, 20_000);
    expect(eventOf(lostTarget, 0).data.workflowId).toBe(lost);
    expect(lostTarget.arrivals[0]).toBeGreaterThanOrEqual(watchedAt + hourMs * 0.75);
    expect(keptTarget.received).toHaveLength(0);
    // Idempotent: a second restore finds every watcher running and starts none.
    const again = await restoreInactivityWatchers({ client: temporal, taskQueue }, flowlog.store);
    expect(again).toMatchObject({ recreated: 0 });
    expect(again.running).toBeGreaterThanOrEqual(2);
    await Promise.all([disable(lostSubscription), disable(keptSubscription)]);
  });
});

describe("Watchers are the deliveries' work (issue 51)", () => {
  it("runs on the deliveries' queue: a worker with the deliveries role alone fires it", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    await worker.stop();
    worker = await startWorker(temporalServer, workerDeps(), taskQueue, { roles: ["deliveries"] });
    try {
      const subscriptionId = await watch(workflowId, target.origin, 0.25);
      const watcher = temporal.workflow.getHandle(inactivityWatchId(subscriptionId, workflowId));
      expect((await watcher.describe()).taskQueue).toBe(deliveryTaskQueue(taskQueue));
      await untilTrue(() => target.received.length > 0, 15_000);
      expect(eventOf(target, 0).data.workflowId).toBe(workflowId);
      await disable(subscriptionId);
    } finally {
      await worker.stop();
      worker = await startWorker(temporalServer, workerDeps(), taskQueue);
    }
  });

  it("one started on the executions' queue, where watchers ran before, goes on on the deliveries' queue with its search attributes, and fires there", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    const subscriptionId = await watch(workflowId, target.origin, 0.5);
    const id = inactivityWatchId(subscriptionId, workflowId);
    const current = temporal.workflow.getHandle(id);
    const { typedSearchAttributes } = await current.describe();
    // Replaced in one call: between a terminate and a start, flowlog may start its own watcher again.
    await temporal.workflow.start("watchInactivity", {
      workflowId: id,
      taskQueue,
      args: [{ subscriptionId, workflowId, sinceMs: Date.now() }],
      typedSearchAttributes,
      workflowIdConflictPolicy: "TERMINATE_EXISTING",
    });
    await untilTrue(
      async () => (await current.describe()).taskQueue === deliveryTaskQueue(taskQueue),
      15_000,
    );
    expect((await current.describe()).typedSearchAttributes).toEqual(typedSearchAttributes);
    await untilTrue(() => target.received.length > 0, 15_000);
    expect(eventOf(target, 0).data.workflowId).toBe(workflowId);
    await disable(subscriptionId);
  });
});
