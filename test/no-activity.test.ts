import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Client, Connection } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { defaultPlanLimits } from "../src/domain/plans.js";
import type { AlertFiredEvent } from "../src/notifications/alert-event.js";
import type { ActivityDeps } from "../src/temporal/activities/index.js";
import { inactivityWatchId } from "../src/temporal/inactivity-ids.js";
import { restWithKey } from "./support/api-server.js";
import { type RunningWorker, startWorker } from "./support/engine.js";
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

const workerDeps = (): ActivityDeps => ({
  store: flowlog.store,
  allowPrivateNetworks: true,
  planLimits: defaultPlanLimits,
  notifications: {
    publicBaseUrl: "http://flowlog.test",
    smtpUrl: undefined,
    mailFrom: "flowlog <flowlog@test>",
    alertHourMs: hourMs,
  },
});

beforeAll(async () => {
  flowlog = await startFlowlog({ taskQueue });
  worker = await startWorker(temporalServer, workerDeps(), taskQueue);
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
  alice = createAccount(flowlog.store);
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
async function watch(workflowId: string, url: string, thresholdHours: number): Promise<string> {
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
    },
  );
  expect(response.status, response.text).toBe(200);
  return (response.json as { subscription: { id: string } }).subscription.id;
}

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await sleep(50);
  }
}

const eventOf = (target: HttpReceiver, index: number) =>
  JSON.parse(target.received[index]?.body ?? "null") as AlertFiredEvent;

describe("No activity (D21: checked by a durable Temporal timer, not on execution)", () => {
  it("fires one workflow.alert.fired after X hours without an execution, with D21's data", async () => {
    const workflowId = createWorkflow(flowlog.store, alice.workspaceId, "Nightly export");
    const target = await receiver();
    const createdAt = Date.now();
    await watch(workflowId, target.origin, 0.5);
    await until(() => target.received.length > 0, 15_000);
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
    await until(() => target.received.some((r) => JSON.parse(r.body).data.workflowId === laterId), 15_000);
    await restWithKey(
      flowlog.server.url,
      alice.key,
      "POST",
      `/api/v1/workspaces/${alice.workspaceId}/notifications/${(subscribed.json as { subscription: { id: string } }).subscription.id}:disable`,
      {},
    );
  });

  it("stays silent while executions keep arriving, and fires once they stop", async () => {
    const workflowId = createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    await watch(workflowId, target.origin, 0.5);
    let lastStartedAt = 0;
    // One execution every quarter of X, for three times X: the silence never reaches X.
    for (let i = 0; i < 12; i++) {
      lastStartedAt = Date.now();
      flowlog.store.logs.insertExecution(execution(alice, workflowId, { startedAt: lastStartedAt }));
      await sleep(hourMs / 8);
    }
    expect(target.received).toHaveLength(0);
    await until(() => target.received.length > 0, 15_000);
    expect(target.arrivals[0]).toBeGreaterThanOrEqual(lastStartedAt + hourMs / 2);
    expect(eventOf(target, 0).data.lastExecutionAt).toBe(new Date(lastStartedAt).toISOString());
  });

  it("the cooldown suppresses a second alert within the hour and allows it after", async () => {
    const workflowId = createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    await watch(workflowId, target.origin, 0.25);
    await until(() => target.received.length > 0, 15_000);
    // X is a quarter of the hour: without the cooldown, the silence would fire three more times in it.
    await sleep(hourMs * 0.75);
    expect(target.received).toHaveLength(1);
    await until(() => target.received.length > 1, 15_000);
    expect((target.arrivals[1] ?? 0) - (target.arrivals[0] ?? 0)).toBeGreaterThanOrEqual(hourMs - 50);
    expect(eventOf(target, 1).id).not.toBe(eventOf(target, 0).id);
  });

  it("stops watching when the subscription is disabled", async () => {
    const workflowId = createWorkflow(flowlog.store, alice.workspaceId);
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
    const [dropped, kept] = [1, 2].map(() => createWorkflow(flowlog.store, alice.workspaceId));
    const target = await receiver();
    const subscriptionId = await watch(dropped as string, target.origin, 0.25);
    const subscription = `/api/v1/workspaces/${alice.workspaceId}/notifications/${subscriptionId}`;
    const reselected = await restWithKey(flowlog.server.url, alice.key, "PATCH", subscription, {
      workflowIds: [kept],
    });
    expect(reselected.status, reselected.text).toBe(200);
    await temporal.workflow.getHandle(inactivityWatchId(subscriptionId, dropped as string)).result();
    const alerted = target.received.map((_, index) => eventOf(target, index).data.workflowId);
    expect(alerted).not.toContain(dropped);
    // The kept workflow's watcher would go on alerting every (scaled) hour: end it with the subscription.
    await restWithKey(flowlog.server.url, alice.key, "POST", `${subscription}:disable`);
  });

  it("survives a worker restart: the timer is Temporal's, and a new worker fires it", async () => {
    const workflowId = createWorkflow(flowlog.store, alice.workspaceId);
    const target = await receiver();
    await watch(workflowId, target.origin, 0.5);
    await sleep(hourMs / 8);
    await worker.stop();
    await sleep(hourMs * 0.75);
    expect(target.received).toHaveLength(0);
    worker = await startWorker(temporalServer, workerDeps(), taskQueue);
    await until(() => target.received.length > 0, 20_000);
    expect(eventOf(target, 0).data.workflowId).toBe(workflowId);
    await sleep(hourMs / 4);
    expect(target.received).toHaveLength(1);
  });
});
