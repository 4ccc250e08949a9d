import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { WorkflowNotFoundError } from "@temporalio/client";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { ExecutionResult } from "../src/engine/execution-types.js";
import { fanOutWorkflowId } from "../src/temporal/delivery-ids.js";
import {
  EngineHarness,
  type RunningWorker,
  settledDeliveries,
  startWorker,
  testDeps,
} from "./support/engine.js";
import { offlineWorkflowState, subscribeWebhook } from "./support/flowlog.js";
import { receiversClosedAfterAll, sendJson } from "./support/http-receiver.js";
import { until } from "./support/until.js";

/**
 * Issue 51, item 5: deliveries have their own task queue, and a worker runs executions, deliveries or
 * both (FLOWLOG_WORKER_ROLES), so a deployment scales them apart and a burst of deliveries never takes
 * what executions need. Real workers on the real Temporal dev server, each test on a queue of its own.
 */

const temporal = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const receiver = receiversClosedAfterAll();
const opened: { workers: RunningWorker[]; harnesses: EngineHarness[] } = { workers: [], harnesses: [] };

afterEach(async () => {
  await Promise.all(opened.workers.splice(0).map((worker) => worker.stop()));
  await Promise.all(opened.harnesses.splice(0).map((harness) => harness.close()));
});

/** A workspace of its own on a store of its own, and a task queue of its own for the test's workers. */
async function setUp() {
  const harness = await EngineHarness.connect(temporal);
  opened.harnesses.push(harness);
  const queue = `roles-${randomUUID()}`;
  const worker = async (options: Parameters<typeof startWorker>[3]) => {
    const started = await startWorker(temporal, testDeps(harness.store), queue, options);
    opened.workers.push(started);
    return started;
  };
  const workflowId = await harness.saveWorkflow(offlineWorkflowState);
  return { harness, queue, worker, workflowId };
}

/** A webhook receiver answering 200, with the time of each arrival, and a subscription to every execution. */
async function subscribedReceiver(harness: EngineHarness) {
  const arrivals: number[] = [];
  const hook = await receiver((_, response) => {
    arrivals.push(Date.now());
    sendJson(response, 200, {});
  });
  const subscriptionId = await subscribeWebhook(harness.store, harness.account.workspaceId, hook.origin);
  return { hook, arrivals, subscriptionId };
}

/** Whether any worker has taken a workflow task of the workflow: a worker of its queue polls. */
async function taken(harness: EngineHarness, workflowId: string): Promise<boolean> {
  const history = await harness.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).some((event) => event.workflowTaskStartedEventAttributes);
}

async function fanOutStarted(harness: EngineHarness, logId: string): Promise<boolean> {
  try {
    await harness.client.workflow.getHandle(fanOutWorkflowId(logId)).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

describe("Workers by role: executions and deliveries apart (issue 51)", () => {
  it("a worker with the deliveries role alone runs no execution; one with the executions role alone runs it and sends nothing; a deliveries worker started then sends its delivery, once", async () => {
    const { harness, worker, queue, workflowId } = await setUp();
    const { hook, subscriptionId } = await subscribedReceiver(harness);

    const deliveries = await worker({ roles: ["deliveries"] });
    const handle = await harness.start(queue, workflowId);
    await sleep(3_000);
    expect(await taken(harness, handle.workflowId)).toBe(false);
    await deliveries.stop();

    await worker({ roles: ["executions"] });
    const result: ExecutionResult = await handle.result();
    expect(result.status).toBe("success");
    expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
    // The entry's notifications wait in the outbox for a deliveries worker: no fan-out, nothing sent.
    await sleep(3_000);
    expect(await harness.store.outbox.holds(result.logId)).toBe(true);
    expect(await fanOutStarted(harness, result.logId)).toBe(false);
    expect(hook.received).toHaveLength(0);

    await worker({ roles: ["deliveries"] });
    const [delivery] = await settledDeliveries(harness.store, harness.account.workspaceId, subscriptionId);
    expect(delivery).toMatchObject({ status: "succeeded", logId: result.logId, attempts: 1 });
    expect(hook.received).toHaveLength(1);
    expect(JSON.parse(hook.received[0]?.body ?? "{}").data.executionId).toBe(result.executionId);
    expect(await harness.store.outbox.holds(result.logId)).toBe(false);
  });

  it("with each role in a worker of its own, every execution runs and every delivery arrives once", async () => {
    const { harness, worker, queue, workflowId } = await setUp();
    const { hook, subscriptionId } = await subscribedReceiver(harness);
    await worker({ roles: ["executions"] });
    await worker({ roles: ["deliveries"] });

    const results = await Promise.all(
      Array.from({ length: 8 }, async () => (await harness.start(queue, workflowId)).result()),
    );
    expect(results.map((result) => result.status)).toEqual(Array(8).fill("success"));
    const settled = await settledDeliveries(harness.store, harness.account.workspaceId, subscriptionId, 8);
    expect(settled.map((delivery) => delivery.status)).toEqual(Array(8).fill("succeeded"));
    const told = hook.received.map((request) => JSON.parse(request.body).data.executionId as string);
    expect(told.sort()).toEqual(results.map((result) => result.executionId).sort());
  });

  it("a worker's pace spaces the delivery attempts it starts (FLOWLOG_WORKER_DELIVERY_PACE)", async () => {
    const { harness, worker, queue, workflowId } = await setUp();
    const { hook, arrivals } = await subscribedReceiver(harness);
    const subscriptions = 10;
    for (let i = 1; i < subscriptions; i++) {
      await subscribeWebhook(harness.store, harness.account.workspaceId, hook.origin);
    }
    const perSecond = 2;
    await worker({ deliveriesPerSecond: perSecond });
    await (await harness.start(queue, workflowId)).result();
    await until("every delivery", () => (arrivals.length === subscriptions ? true : undefined), 30_000);
    // Unpaced, the ten arrive within a few hundred milliseconds. Paced, the first few may come at once
    // (the worker's polls already out), then one every half second: nine intervals, less up to four.
    const spread = (arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0);
    expect(spread).toBeGreaterThanOrEqual(((subscriptions - 5) / perSecond) * 1_000);
  });
});
