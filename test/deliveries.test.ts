import { createHmac, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Client, Connection, WorkflowNotFoundError } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  defaultMaxAttempts,
  retryAfterCapMs,
  retryDelayMs,
  retryDelaysMs,
} from "../src/domain/delivery-schedule.js";
import { defaultPlanLimits } from "../src/limits/plans.js";
import { defaultQuotas } from "../src/limits/quotas.js";
import { createApi } from "../src/server/api.js";
import type { DeliveryRecord } from "../src/store/delivery-rows.js";
import type { Level, Trigger } from "../src/store/records.js";
import type { SubscriptionSettings } from "../src/store/subscriptions-store.js";
import {
  busyRetryDelayMs,
  pacedRetryDelayMs,
  temporalRetryDelayMs,
} from "../src/temporal/activities/block-admission.js";
import { eventIdOf } from "../src/temporal/activities/delivery-activities.js";
import { lazyTemporalClient } from "../src/temporal/client.js";
import {
  deliveryTaskQueue,
  fanOutWorkflowId,
  redeliveryWorkflowId,
  testDeliveryWorkflowId,
} from "../src/temporal/delivery-ids.js";
import { flowlogSearchAttributes } from "../src/temporal/search-attributes.js";
import { executionWorkflowId } from "../src/temporal/start-execution.js";
import { attemptSlotLimits } from "../src/temporal/worker-slots.js";
import { newId } from "../src/util/ids.js";
import { restWithKey, startTestApiServer } from "./support/api-server.js";
import {
  notifyingDeps,
  type RunningWorker,
  runToEnd,
  settledDeliveries,
  startedFanOut,
  startWorker,
} from "./support/engine.js";
import {
  createAccount,
  createWorkflow,
  execution,
  offlineWorkflowState,
  operatorToken,
  startFlowlog,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
  testWorkflowState,
} from "./support/flowlog.js";
import {
  type HttpReceiver,
  type ReceivedRequest,
  type ReceiverHandler,
  sendJson,
  startHeldReceiver,
  startReceiver,
} from "./support/http-receiver.js";
import { until } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `deliveries-${randomUUID()}`;
/** D19's delays divided by 50: five attempts in seconds (the dev server rounds short waits up to about 1 s). */
const delayScale = 0.02;

let flowlog: TestFlowlog;
let worker: RunningWorker;
let connection: Connection;
let temporal: Client;
let alice: TestAccount;
let bob: TestAccount;
const receivers: HttpReceiver[] = [];

const workerDeps = (scale: number) => notifyingDeps(flowlog.store, { delivery: { delayScale: scale } });

beforeAll(async () => {
  flowlog = await startFlowlog({ taskQueue });
  worker = await startWorker(temporalServer, workerDeps(delayScale), taskQueue);
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
  alice = await createAccount(flowlog.store);
  bob = await createAccount(flowlog.store);
});

afterAll(async () => {
  await worker?.stop();
  await connection?.close();
  await flowlog?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

/** A receiver that records when each request arrived, answering through `handler`. */
async function receiver(handler: ReceiverHandler = (_, response) => sendJson(response, 200, { ok: true })) {
  const arrivals: number[] = [];
  const started = await startReceiver((request, response, index) => {
    arrivals.push(Date.now());
    return handler(request, response, index);
  });
  receivers.push(started);
  return Object.assign(started, { arrivals });
}

/** A workflow that runs without any network: starter, then a response block. */
async function saveWorkflow(account: TestAccount): Promise<string> {
  return await createWorkflow(
    flowlog.store,
    account.workspaceId,
    "Deliveries test",
    null,
    offlineWorkflowState,
  );
}

function subscribe(
  account: TestAccount,
  url: string,
  options: Partial<SubscriptionSettings> & { secret?: string } = {},
): Promise<string> {
  return subscribeWebhook(flowlog.store, account.workspaceId, url, options);
}

async function execute(
  account: TestAccount,
  workflowId: string,
  trigger: Trigger = "manual",
  queue = taskQueue,
) {
  const result = await runToEnd(temporal, account, workflowId, { taskQueue: queue, trigger });
  return { ...result, resultAt: Date.now() };
}

const deliveriesOf = (subscriptionId: string, account = alice) =>
  flowlog.store.deliveries.list({ workspaceId: account.workspaceId, subscriptionId }, 100);

async function settled(subscriptionId: string): Promise<DeliveryRecord> {
  const [delivery] = await settledDeliveries(flowlog.store, alice.workspaceId, subscriptionId);
  return delivery as DeliveryRecord;
}

const header = (request: ReceivedRequest | undefined, name: string) => String(request?.headers[name]);

function quotasWith(workspace: Partial<(typeof defaultQuotas)["workspace"]>) {
  return { ...defaultQuotas, workspace: { ...defaultQuotas.workspace, ...workspace } };
}

describe("The retry schedule (D19, spec 'Other constants')", () => {
  it("waits 5 s, 15 s, 1 min, 3 min and, for a sixth attempt, 10 min, each plus up to 10 % jitter", () => {
    expect(retryDelaysMs).toEqual([5_000, 15_000, 60_000, 180_000, 600_000]);
    expect(defaultMaxAttempts).toBe(5);
    retryDelaysMs.forEach((step, index) => {
      expect(retryDelayMs(index + 1, { random: () => 0 })).toBe(step);
      expect(retryDelayMs(index + 1, { random: () => 0.999_999 })).toBe(Math.round(step * 1.1));
    });
  });

  it("honours a longer Retry-After, capped at 10 min, and never waits less than the schedule", () => {
    const fixed = { random: () => 0 };
    expect(retryDelayMs(1, { ...fixed, retryAfterMs: 30_000 })).toBe(30_000);
    expect(retryDelayMs(1, { ...fixed, retryAfterMs: 2 * 3_600_000 })).toBe(retryAfterCapMs);
    expect(retryDelayMs(2, { ...fixed, retryAfterMs: 1_000 })).toBe(15_000);
  });

  it("scales every delay by the same factor, so tests keep the ratios", () => {
    expect(retryDelayMs(2, { random: () => 0, scale: 0.001 })).toBe(15);
  });
});

describe("Waits handed to Temporal (D19, D26, D38)", () => {
  // Temporal ends an activity's retries when a failure asks for a next retry of 0 ms (RETRY_STATE_TIMEOUT):
  // a paced delivery whose wait came to 0 was failed as lost without being sent.
  it("a paced attempt whose place opens at once still waits, however its jitter falls", () => {
    expect(pacedRetryDelayMs(0, 1, () => 0)).toBe(1);
    expect(pacedRetryDelayMs(0, 1, () => 0.001)).toBe(1);
    expect(pacedRetryDelayMs(250, 1, () => 0)).toBe(250);
    // The jitter grows with the refusals as a busy attempt's wait does, to 5 s.
    expect(pacedRetryDelayMs(250, 1, () => 0.999_999)).toBe(450);
    expect(pacedRetryDelayMs(250, 30, () => 0.999_999)).toBe(5_250);
  });

  it("a busy attempt waits half its busy wait to all of it, from 200 ms to 5 s", () => {
    expect(busyRetryDelayMs(1, () => 0)).toBe(100);
    expect(busyRetryDelayMs(1, () => 0.999_999)).toBe(200);
    expect(busyRetryDelayMs(30, () => 0.999_999)).toBe(5_000);
  });

  it("a retry of the schedule scaled below a millisecond waits one", () => {
    expect(retryDelayMs(1, { random: () => 0, scale: 0.000_01 })).toBe(0);
    expect(temporalRetryDelayMs(retryDelayMs(1, { random: () => 0, scale: 0.000_01 }))).toBe(1);
    expect(temporalRetryDelayMs(15_000.4)).toBe(15_000);
  });
});

describe("Matching and fan-out (spec 'Events', D19)", () => {
  it("delivers one signed event per matching subscription, and none to the others", async () => {
    const workflowId = await saveWorkflow(alice);
    const matching = await receiver();
    const others = await receiver();
    const secret = "whsec_test_fan_out";
    const all = await subscribe(alice, matching.origin, { secret });
    const byId = await subscribe(alice, matching.origin, { allWorkflows: false, workflowIds: [workflowId] });
    const errorsOnly = await subscribe(alice, others.origin, { levelFilter: ["error" as Level] });
    const apiOnly = await subscribe(alice, others.origin, { triggerFilter: ["api" as Trigger] });
    const otherWorkflow = await subscribe(alice, others.origin, {
      allWorkflows: false,
      workflowIds: ["wf_other"],
    });
    await subscribe(bob, others.origin);

    const result = await execute(alice, workflowId);
    const signed = await until("the signed delivery", () =>
      matching.received.find((r) => r.headers["service-signature"] !== undefined),
    );
    // The receiver may have the request before the attempt is recorded: wait for both deliveries.
    await Promise.all([settled(all), settled(byId)]);

    const event = JSON.parse(signed.body);
    expect(event).toMatchObject({
      id: eventIdOf(result.logId),
      type: "workflow.execution.completed",
      data: { workflowId, executionId: result.executionId, status: "success", trigger: "manual" },
    });
    // D19: the signature covers `<t>.<body>` with t = service-timestamp, checked here independently.
    const t = header(signed, "service-timestamp");
    const hex = createHmac("sha256", secret).update(`${t}.${signed.body}`).digest("hex");
    expect(header(signed, "service-signature")).toBe(`t=${t},v1=${hex}`);
    expect(header(signed, "idempotency-key")).toBe(header(signed, "service-delivery-id"));
    expect(matching.received).toHaveLength(2);
    expect(matching.received.filter((r) => r.headers["service-signature"] === undefined)).toHaveLength(1);
    for (const none of [errorsOnly, apiOnly, otherWorkflow]) expect(await deliveriesOf(none)).toEqual([]);
    expect(others.received).toEqual([]);
    expect((await deliveriesOf(all))[0]).toMatchObject({
      status: "succeeded",
      attempts: 1,
      logId: result.logId,
    });
  });

  it("starts the fan-out only for an execution that some subscription matches", async () => {
    const carol = await createAccount(flowlog.store);
    const workflowId = await saveWorkflow(carol);
    const listener = await receiver();
    const fanOutOf = (logId: string) => temporal.workflow.getHandle(fanOutWorkflowId(logId)).describe();

    await subscribe(carol, listener.origin, { levelFilter: ["error" as Level] });
    const unmatched = await execute(carol, workflowId);
    await expect(fanOutOf(unmatched.logId)).rejects.toBeInstanceOf(WorkflowNotFoundError);

    const matching = await subscribe(carol, listener.origin);
    const matched = await execute(carol, workflowId);
    // Issue 12: the fan-out makes the delivery itself, as an activity, and ends with it.
    expect(await (await startedFanOut(temporal, matched.logId)).result()).toBe(1);
    expect((await fanOutOf(matched.logId)).status.name).toBe("COMPLETED");
    const [delivery] = await deliveriesOf(matching, carol);
    expect(delivery?.status).toBe("succeeded");
    expect(listener.received).toHaveLength(1);
  });

  it("makes each delivery an activity of the fan-out, found in Temporal by delivery and subscription id", async () => {
    const dave = await createAccount(flowlog.store);
    const workflowId = await saveWorkflow(dave);
    const listener = await receiver();
    const subscriptions = [await subscribe(dave, listener.origin), await subscribe(dave, listener.origin)];
    const { logId } = await execute(dave, workflowId);
    const fanOut = await startedFanOut(temporal, logId);
    expect(await fanOut.result()).toBe(2);
    const deliveryIds = (await Promise.all(subscriptions.map((s) => deliveriesOf(s, dave))))
      .flat()
      .map((d) => d.id);
    expect(deliveryIds).toHaveLength(2);
    // One workflow for both, each delivery one activity with the delivery id as its activity id.
    const history = await fanOut.fetchHistory();
    const scheduled = (history.events ?? []).flatMap((event) => {
      const attributes = event.activityTaskScheduledEventAttributes;
      return attributes?.activityType?.name === "attemptDelivery" ? [attributes.activityId] : [];
    });
    expect(scheduled.sort()).toEqual([...deliveryIds].sort());
    expect(
      (await fanOut.describe()).typedSearchAttributes.get(flowlogSearchAttributes.deliveryIds)?.sort(),
    ).toEqual([...deliveryIds].sort());
    expect(
      (await fanOut.describe()).typedSearchAttributes.get(flowlogSearchAttributes.subscriptionIds)?.sort(),
    ).toEqual([...subscriptions].sort());
    expect(listener.received.map((r) => header(r, "service-delivery-id")).sort()).toEqual(
      [...deliveryIds].sort(),
    );
  });

  it("returns the execution's result without waiting for a slow receiver", async () => {
    const workflowId = await saveWorkflow(alice);
    const receiverDelayMs = 3_000;
    let answeredAt = 0;
    const slow = await receiver(async (_, response) => {
      await sleep(receiverDelayMs);
      answeredAt = Date.now();
      sendJson(response, 200, {});
    });
    const subscriptionId = await subscribe(alice, slow.origin);
    const startedAt = Date.now();
    const result = await execute(alice, workflowId);
    await settled(subscriptionId);
    // The delivery may reach the receiver before or after the caller has the result (the entry is written,
    // and its intent left, before the answer goes back): what the caller never waits for is its answer.
    expect(result.resultAt - startedAt).toBeLessThan(receiverDelayMs);
    expect(slow.arrivals).toHaveLength(1);
    expect(answeredAt).toBeGreaterThan(result.resultAt);
  });
});

describe("Webhook delivery retries (D19)", () => {
  it("a receiver answering 500, 500, 200 gets exactly three attempts, the first wait the 5 s step and the second the 15 s one", async () => {
    // The dev server fires activity retries shorter than about a second only after about a second, which
    // would blur the steps; at a quarter of D19's delays (1.25 s, 3.75 s) its timers are exact.
    const scale = 0.25;
    const queue = `deliveries-ratio-${randomUUID()}`;
    const ratioWorker = await startWorker(temporalServer, workerDeps(scale), queue);
    const workflowId = await saveWorkflow(alice);
    const flaky = await receiver((_, response, index) => sendJson(response, index < 2 ? 500 : 200, {}));
    const subscriptionId = await subscribe(alice, flaky.origin, { secret: "whsec_test_retries" });
    const delivery = await execute(alice, workflowId, "manual", queue)
      .then(() => settled(subscriptionId))
      .finally(() => ratioWorker.stop());

    expect(delivery).toMatchObject({ status: "succeeded", attempts: 3 });
    expect(flaky.received).toHaveLength(3);
    const keys = flaky.received.map((r) => header(r, "idempotency-key"));
    expect(new Set(keys)).toEqual(new Set([delivery.id]));
    const stamps = flaky.received.map((r) => Number(header(r, "service-timestamp")));
    expect(stamps[1]).toBeGreaterThan(stamps[0] ?? 0);
    expect(stamps[2]).toBeGreaterThan(stamps[1] ?? 0);
    expect(new Set(flaky.received.map((r) => r.body)).size).toBe(1);
    const [first = 0, second = 0, third = 0] = flaky.arrivals;
    const [fiveSeconds, fifteenSeconds, oneMinute] = retryDelaysMs.map((step) => step * scale);
    // Each wait is its own step of the schedule, in order: at least that step (the jitter only adds), and
    // shorter than the next step, so the first is the 5 s wait and the second the 15 s one. A wall-clock
    // ratio of the two would also measure how busy the machine is; the steps' own sizes are checked above.
    expect(second - first).toBeGreaterThanOrEqual(fiveSeconds ?? 0);
    expect(second - first).toBeLessThan(fifteenSeconds ?? 0);
    expect(third - second).toBeGreaterThanOrEqual(fifteenSeconds ?? 0);
    expect(third - second).toBeLessThan(oneMinute ?? 0);
    const attempts = await flowlog.store.deliveries.attemptsOf(delivery.id);
    expect(attempts.map((a) => [a.series, a.attempt, a.outcome, a.httpStatus])).toEqual([
      [1, 1, "retrying", 500],
      [1, 2, "retrying", 500],
      [1, 3, "succeeded", 200],
    ]);
  });

  it("a 404 fails the delivery after one attempt", async () => {
    const workflowId = await saveWorkflow(alice);
    const gone = await receiver((_, response) => sendJson(response, 404, { error: "no such hook" }));
    const subscriptionId = await subscribe(alice, gone.origin);
    await execute(alice, workflowId);
    const delivery = await settled(subscriptionId);
    await sleep(retryDelaysMs[0] * delayScale * 3);
    expect(delivery).toMatchObject({ status: "failed", attempts: 1 });
    expect(gone.received).toHaveLength(1);
  });

  it("stops after five attempts when the receiver keeps failing", async () => {
    const workflowId = await saveWorkflow(alice);
    const down = await receiver((_, response) => sendJson(response, 503, {}));
    const subscriptionId = await subscribe(alice, down.origin);
    await execute(alice, workflowId);
    const delivery = await settled(subscriptionId);
    expect(delivery).toMatchObject({
      status: "failed",
      attempts: 5,
      lastError: expect.stringMatching(/503/),
    });
    expect(down.received).toHaveLength(5);
    expect((await flowlog.store.deliveries.attemptsOf(delivery.id)).at(-1)?.outcome).toBe("failed");
  }, 30_000);
});

describe("One tenant cannot hold the delivery worker (D26's principle, for deliveries)", () => {
  /**
   * A worker of its own on `quotas`, an endpoint that holds every request until released and a quick one;
   * `stop` releases the held requests and stops the worker.
   */
  async function slotsWorkerWith(quotas: typeof defaultQuotas) {
    const queue = `deliveries-slots-${randomUUID()}`;
    const worker = await startWorker(temporalServer, { ...workerDeps(delayScale), quotas }, queue);
    const slow = await startHeldReceiver();
    receivers.push(slow);
    const stop = async () => {
      slow.release();
      await worker.stop();
    };
    return { queue, slow, quick: await receiver(), stop };
  }

  it("a workspace's slow endpoint gets at most its share of attempts at once, another workspace's delivery arrives meanwhile, and a refusal is no attempt", async () => {
    const perWorkspace = 2;
    const { queue, slow, quick, stop } = await slotsWorkerWith(
      quotasWith({ concurrentDeliveries: perWorkspace }),
    );
    try {
      const flooder = await createAccount(flowlog.store);
      const slowSubscription = await subscribe(flooder, slow.origin);
      const quietSubscription = await subscribe(bob, quick.origin);
      const floodWorkflow = await saveWorkflow(flooder);
      const floods = 6;
      await Promise.all(
        Array.from({ length: floods }, () => execute(flooder, floodWorkflow, "manual", queue)),
      );
      await until(
        "the flood's attempts at the slow endpoint",
        () => slow.received.length >= perWorkspace || undefined,
      );

      await execute(bob, await saveWorkflow(bob), "manual", queue);
      const quiet = await until("the quiet workspace's delivery", async () =>
        (await deliveriesOf(quietSubscription, bob)).find((d) => d.status !== "pending"),
      );
      expect(quiet.status).toBe("succeeded");
      expect(quick.received).toHaveLength(1);
      // The quiet delivery arrived while the flood's attempts still waited on their endpoint.
      expect(slow.inFlight()).toBe(perWorkspace);
      expect(slow.received).toHaveLength(perWorkspace);

      // Released, every flood delivery goes through, its workspace's attempts never more than its share at
      // once, and each in one attempt: the runs refused while the slots were full counted for nothing.
      slow.release();
      await until("every flood delivery settled", async () => {
        const deliveries = await deliveriesOf(slowSubscription, flooder);
        const done = deliveries.length === floods && deliveries.every((d) => d.status !== "pending");
        return done ? deliveries : undefined;
      });
      const deliveries = await deliveriesOf(slowSubscription, flooder);
      expect(deliveries.map((d) => [d.status, d.attempts])).toEqual(
        Array.from({ length: floods }, () => ["succeeded", 1]),
      );
      for (const delivery of deliveries) {
        const attempts = await flowlog.store.deliveries.attemptsOf(delivery.id);
        expect(attempts.map((a) => [a.series, a.attempt, a.outcome])).toEqual([[1, 1, "succeeded"]]);
      }
      expect(slow.received).toHaveLength(floods);
      expect(slow.mostAtOnce()).toBe(perWorkspace);
    } finally {
      await stop();
    }
  }, 60_000);

  it("several busy workspaces together leave a slot for a workspace running none", async () => {
    // Every flooding workspace stays within its share, but together they want every attempt slot of the
    // worker: 45 workspaces with two hanging endpoints each, 90 attempts (D26's worker quotas). Those
    // already running one hold at most 80 together, so the quiet workspace still gets a slot.
    const perWorkspace = 2;
    const quotas = quotasWith({ concurrentDeliveries: perWorkspace });
    const { total, reserve } = attemptSlotLimits(quotas, perWorkspace, "deliveries");
    const flooders = total / perWorkspace;
    const { queue, slow, quick, stop } = await slotsWorkerWith(quotas);
    try {
      const accounts = await Promise.all(
        Array.from({ length: flooders }, async () => {
          const account = await createAccount(flowlog.store);
          for (let i = 0; i < perWorkspace; i++) await subscribe(account, slow.origin);
          return { account, workflowId: await saveWorkflow(account) };
        }),
      );
      await Promise.all(accounts.map((a) => execute(a.account, a.workflowId, "manual", queue)));
      await until(
        "the flood's attempts at the hanging endpoints",
        () => slow.received.length >= total - reserve || undefined,
        30_000,
      );

      const quiet = await createAccount(flowlog.store);
      const quietSubscription = await subscribe(quiet, quick.origin);
      await execute(quiet, await saveWorkflow(quiet), "manual", queue);
      const delivered = await until("the quiet workspace's delivery", async () =>
        (await deliveriesOf(quietSubscription, quiet)).find((d) => d.status !== "pending"),
      );
      expect(delivered.status).toBe("succeeded");
      expect(quick.received).toHaveLength(1);
      // It arrived while the flood still held its attempts: every workspace one, some a second, up to
      // total - reserve for the workspaces running some; a first attempt may still take a reserved slot.
      expect(slow.inFlight()).toBeGreaterThanOrEqual(total - reserve);
      expect(slow.inFlight()).toBeLessThan(total);

      slow.release();
      const floodDeliveries = async () =>
        (
          await Promise.all(
            accounts.map((a) => flowlog.store.deliveries.list({ workspaceId: a.account.workspaceId }, 10)),
          )
        ).flat();
      const deliveries = await until(
        "every flood delivery settled",
        async () => {
          const all = await floodDeliveries();
          return all.every((d) => d.status !== "pending") && all.length === total ? all : undefined;
        },
        30_000,
      );
      expect(deliveries.map((d) => [d.status, d.attempts])).toEqual(
        Array.from({ length: total }, () => ["succeeded", 1]),
      );
      expect(slow.received).toHaveLength(total);
      expect(slow.mostAtOnce()).toBeLessThan(total);
    } finally {
      await stop();
    }
  }, 120_000);

  it("starts an execution, its notification fan-out and a test send each under the workspace's fairness key", async () => {
    // The task queues take turns between fairness keys (D26), so a workspace's backlog of notified
    // executions queues its own deliveries, not another workspace's: only if every workflow carries its key.
    const carol = await createAccount(flowlog.store);
    const hook = await receiver();
    const subscriptionId = await subscribe(carol, hook.origin);
    const fairnessKeyOf = async (workflowId: string) =>
      (await temporal.workflow.getHandle(workflowId).describe()).priority?.fairnessKey;

    const { executionId, logId } = await execute(carol, await saveWorkflow(carol));
    expect(await fairnessKeyOf(executionWorkflowId(executionId))).toBe(carol.workspaceId);
    expect(await (await startedFanOut(temporal, logId)).result()).toBe(1);
    expect(await fairnessKeyOf(fanOutWorkflowId(logId))).toBe(carol.workspaceId);

    const tested = await restWithKey(
      flowlog.server.url,
      carol.key,
      "POST",
      `/api/v1/workspaces/${carol.workspaceId}/notifications/${subscriptionId}:test`,
      {},
    );
    expect(tested.status).toBe(200);
    const { deliveryId } = tested.json as { deliveryId: string };
    expect(await fairnessKeyOf(testDeliveryWorkflowId(deliveryId))).toBe(carol.workspaceId);
  });
});

describe("The delivery log, redelivery and the Test RPC (issue 5, item 7; D18)", () => {
  it("lists deliveries with their attempts, redelivers with the same ids, and keeps workspaces apart", async () => {
    const workflowId = await saveWorkflow(alice);
    let answer = 404;
    const hook = await receiver((_, response) => sendJson(response, answer, { answer }));
    const subscriptionId = await subscribe(alice, hook.origin);
    const { logId } = await execute(alice, workflowId);
    const delivery = await settled(subscriptionId);
    const base = flowlog.server.url;

    const list = await restWithKey(
      base,
      alice.key,
      "GET",
      `/api/v1/workspaces/${alice.workspaceId}/deliveries?subscriptionId=${subscriptionId}&status=failed&limit=5`,
    );
    expect(list.status).toBe(200);
    expect(list.json).toEqual({
      deliveries: [
        expect.objectContaining({
          id: delivery.id,
          subscriptionId,
          eventId: eventIdOf(logId),
          logId,
          status: "failed",
          attemptCount: 1,
          lastError: expect.stringMatching(/404/),
        }),
      ],
    });
    const succeeded = await restWithKey(
      base,
      alice.key,
      "GET",
      `/api/v1/workspaces/${alice.workspaceId}/deliveries?subscriptionId=${subscriptionId}&status=succeeded`,
    );
    expect(succeeded.json).toEqual({ deliveries: [] });

    const redelivered = await restWithKey(
      base,
      alice.key,
      "POST",
      `/api/v1/deliveries/${delivery.id}:redeliver`,
      {},
    );
    expect(redelivered.status).toBe(200);
    expect(redelivered.json).toMatchObject({ series: 2, delivery: { id: delivery.id, status: "pending" } });
    answer = 200;
    await until("the redelivery", async () =>
      (await flowlog.store.deliveries.get(delivery.id))?.status === "succeeded" ? true : undefined,
    );
    expect(hook.received).toHaveLength(2);
    expect(new Set(hook.received.map((r) => header(r, "idempotency-key")))).toEqual(new Set([delivery.id]));
    expect(new Set(hook.received.map((r) => JSON.parse(r.body).id))).toEqual(new Set([eventIdOf(logId)]));

    const detail = await restWithKey(base, alice.key, "GET", `/api/v1/deliveries/${delivery.id}`);
    expect(detail.status).toBe(200);
    expect(detail.json).toMatchObject({
      delivery: { id: delivery.id, status: "succeeded", attemptCount: 2 },
      event: { id: eventIdOf(logId), type: "workflow.execution.completed" },
      attempts: [
        { series: 1, attempt: 1, outcome: "failed", httpStatus: 404, responseSnippet: '{"answer":404}' },
        { series: 2, attempt: 1, outcome: "succeeded", httpStatus: 200, responseSnippet: '{"answer":200}' },
      ],
    });

    const listOfOther = await restWithKey(
      base,
      bob.key,
      "GET",
      `/api/v1/workspaces/${alice.workspaceId}/deliveries`,
    );
    expect(listOfOther.status).toBe(403);
    const getOfOther = await restWithKey(base, bob.key, "GET", `/api/v1/deliveries/${delivery.id}`);
    expect(getOfOther.status).toBe(404);
    const redeliverOfOther = await restWithKey(
      base,
      bob.key,
      "POST",
      `/api/v1/deliveries/${delivery.id}:redeliver`,
      {},
    );
    expect(redeliverOfOther.status).toBe(404);
    const badLimit = await restWithKey(
      base,
      alice.key,
      "GET",
      `/api/v1/workspaces/${alice.workspaceId}/deliveries?limit=0`,
    );
    expect(badLimit.status).toBe(400);
  });

  it("refuses to redeliver while a series is still running", async () => {
    const workflowId = await saveWorkflow(alice);
    const hanging = await receiver(async (_, response) => {
      await sleep(1_500);
      sendJson(response, 200, {});
    });
    const subscriptionId = await subscribe(alice, hanging.origin);
    await execute(alice, workflowId);
    const delivery = await until("the delivery", async () => (await deliveriesOf(subscriptionId))[0]);
    const refused = await restWithKey(
      flowlog.server.url,
      alice.key,
      "POST",
      `/api/v1/deliveries/${delivery.id}:redeliver`,
      {},
    );
    expect(refused.status).toBe(400);
    await settled(subscriptionId);
  });

  it("sends a sample event through the real channel once and answers with the attempt", async () => {
    const hook = await receiver((_, response) => sendJson(response, 202, { accepted: true }));
    const subscriptionId = await subscribe(alice, hook.origin, { secret: "whsec_test_sample" });
    const tested = await restWithKey(
      flowlog.server.url,
      alice.key,
      "POST",
      `/api/v1/workspaces/${alice.workspaceId}/notifications/${subscriptionId}:test`,
      {},
    );
    expect(tested.status).toBe(200);
    expect(tested.json).toMatchObject({
      attempt: { series: 1, attempt: 1, outcome: "succeeded", httpStatus: 202 },
    });
    expect(hook.received).toHaveLength(1);
    const event = JSON.parse(hook.received[0]?.body ?? "");
    expect(event).toMatchObject({
      id: expect.stringMatching(/^evt_test_/),
      type: "workflow.execution.completed",
    });
    expect(header(hook.received[0], "service-delivery-id")).toBe(
      (tested.json as { deliveryId: string }).deliveryId,
    );

    const notMine = await restWithKey(
      flowlog.server.url,
      bob.key,
      "POST",
      `/api/v1/workspaces/${bob.workspaceId}/notifications/${subscriptionId}:test`,
      {},
    );
    expect(notMine.status).toBe(404);
  });
});

/** Another API server on its own connection to the test's store, with the test worker's task queue. */
async function anotherApiServer(): Promise<{ url: string; close(): Promise<void> }> {
  const store = await flowlog.openAnother();
  const client = lazyTemporalClient(temporalServer.address, temporalServer.namespace);
  const config = { operatorToken, publicBaseUrl: "http://flowlog.test", planLimits: defaultPlanLimits };
  const server = await startTestApiServer(createApi({ config, store, temporal: { client, taskQueue } }));
  return {
    url: server.url,
    close: async () => {
      await server.close();
      await store.close();
    },
  };
}

describe("The delivery log's bounds (D40)", () => {
  type AttemptJson = { series: number; attempt: number };
  type DeliveryJson = {
    attempts: AttemptJson[];
    nextAttemptsCursor?: string;
    delivery: { attemptCount: number };
  };
  const getDelivery = (id: string, query = "", key = alice.key) =>
    restWithKey(flowlog.server.url, key, "GET", `/api/v1/deliveries/${id}${query}`);
  const redeliver = (id: string) =>
    restWithKey(flowlog.server.url, alice.key, "POST", `/api/v1/deliveries/${id}:redeliver`, {});
  const testPath = (subscriptionId: string) =>
    `/api/v1/workspaces/${alice.workspaceId}/notifications/${subscriptionId}:test`;
  const keyOf = ({ series, attempt }: AttemptJson) => `${series}.${attempt}`;

  /** A delivery whose log holds `series` failed series of `perSeries` attempts each, written as the worker writes them. */
  async function deliveryWithAttempts(
    series: number,
    perSeries: number,
  ): Promise<{ id: string; keys: string[] }> {
    const subscriptionId = await subscribe(alice, "http://127.0.0.1:9/never-called");
    const id = newId("dlv");
    const eventId = newId("evt");
    await flowlog.store.deliveries.createOnce({
      id,
      eventId,
      eventType: "workflow.execution.completed",
      subscriptionId,
      workspaceId: alice.workspaceId,
      logId: null,
      event: { id: eventId, type: "workflow.execution.completed" },
      createdAt: Date.now(),
    });
    const keys: string[] = [];
    for (let s = 1; s <= series; s++) {
      for (let attempt = 1; attempt <= perSeries; attempt++) {
        const last = attempt === perSeries;
        await flowlog.store.deliveries.recordAttempt(
          {
            deliveryId: id,
            series: s,
            attempt,
            startedAt: Date.now(),
            durationMs: 1,
            outcome: last ? "failed" : "retrying",
            httpStatus: 503,
            responseSnippet: null,
            error: "HTTP 503",
          },
          last ? "failed" : "pending",
        );
        keys.push(`${s}.${attempt}`);
      }
    }
    return { id, keys };
  }

  it("a delivery's attempts are paged: the newest 100 by default, in order, and a cursor for the older ones", async () => {
    const { id, keys } = await deliveryWithAttempts(30, 5);
    const first = await getDelivery(id);
    expect(first.status, first.text).toBe(200);
    const page = first.json as DeliveryJson;
    expect(page.delivery.attemptCount).toBe(150);
    expect(page.attempts.map(keyOf)).toEqual(keys.slice(50));
    expect(page.nextAttemptsCursor).toEqual(expect.any(String));

    const older = await getDelivery(id, `?attemptsCursor=${page.nextAttemptsCursor}`);
    expect(older.status, older.text).toBe(200);
    expect((older.json as DeliveryJson).attempts.map(keyOf)).toEqual(keys.slice(0, 50));
    expect(older.json).not.toHaveProperty("nextAttemptsCursor");

    // Small pages, walked to the end, hold every attempt once.
    const walked: string[][] = [];
    let cursor: string | undefined;
    do {
      const query = `?attemptsLimit=7${cursor ? `&attemptsCursor=${cursor}` : ""}`;
      const answer = (await getDelivery(id, query)).json as DeliveryJson;
      walked.unshift(answer.attempts.map(keyOf));
      cursor = answer.nextAttemptsCursor;
    } while (cursor);
    expect(walked.flat()).toEqual(keys);
    expect(walked[0]).toHaveLength(150 % 7);
  });

  it("a page of attempts is 1 to 1000, and a cursor is one this API gave for that delivery: else 400 naming the field", async () => {
    const { id } = await deliveryWithAttempts(1, 3);
    const { id: otherId } = await deliveryWithAttempts(1, 3);
    const otherCursor = ((await getDelivery(otherId, "?attemptsLimit=1")).json as DeliveryJson)
      .nextAttemptsCursor;
    expect(((await getDelivery(id, "?attemptsLimit=1000")).json as DeliveryJson).attempts).toHaveLength(3);
    for (const [query, field] of [
      ["?attemptsLimit=0", "attemptsLimit"],
      ["?attemptsLimit=1001", "attemptsLimit"],
      ["?attemptsCursor=not-a-cursor", "attemptsCursor"],
      [`?attemptsCursor=${otherCursor}`, "attemptsCursor"],
    ]) {
      const refused = await getDelivery(id, query);
      expect(refused.status, `${query}: ${refused.text}`).toBe(400);
      expect(refused.json).toMatchObject({ code: "invalid_argument", errors: [{ field }] });
    }
    // Another workspace learns nothing from a cursor: the delivery is still 404 to it.
    expect((await getDelivery(id, "", bob.key)).status).toBe(404);
  });

  it("a delivery is redelivered at most 20 times: the 21st Redeliver is 400 failed_precondition naming the limit", async () => {
    const workflowId = await saveWorkflow(alice);
    const gone = await receiver((_, response) => sendJson(response, 404, {}));
    const subscriptionId = await subscribe(alice, gone.origin);
    await execute(alice, workflowId);
    const delivery = await settled(subscriptionId);
    for (let series = 2; series <= 21; series++) {
      const answer = await redeliver(delivery.id);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.json).toMatchObject({ series });
      await until(`series ${series} settled`, async () =>
        (await flowlog.store.deliveries.get(delivery.id))?.status === "failed" ? true : undefined,
      );
    }
    const refused = await redeliver(delivery.id);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json).toMatchObject({ code: "failed_precondition" });
    expect((refused.json as { detail: string }).detail).toMatch(
      /redelivered 20 times, the most allowed is 20/,
    );
    expect(await flowlog.store.deliveries.get(delivery.id)).toMatchObject({ status: "failed", attempts: 21 });
    expect(gone.received).toHaveLength(21);
    expect(new Set(gone.received.map((r) => header(r, "idempotency-key")))).toEqual(new Set([delivery.id]));
  }, 180_000);

  it("a subscription is tested at most 10 times a minute, counted in the store across API servers: then 429 with Retry-After", async () => {
    const hook = await receiver();
    const subscriptionId = await subscribe(alice, hook.origin);
    // A second API server on a connection of its own to the same store, as another process (SQLite) or
    // machine (PostgreSQL) has it. Eleven tests at once, split between the two: one count for both.
    const other = await anotherApiServer();
    try {
      const answers = await Promise.all(
        Array.from({ length: 11 }, (_, i) =>
          restWithKey(
            i % 2 ? other.url : flowlog.server.url,
            alice.key,
            "POST",
            testPath(subscriptionId),
            {},
          ),
        ),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(10).fill(200), 429]);
      const refused = answers.find((answer) => answer.status === 429) as (typeof answers)[number];
      expect(refused.json).toMatchObject({
        code: "resource_exhausted",
        detail: expect.stringMatching(/at most 10 times a minute/),
      });
      expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(6);
    } finally {
      await other.close();
    }
    expect(hook.received).toHaveLength(10);

    // The count is the subscription's: another one of the workspace is tested at once.
    const otherSubscription = await subscribe(alice, hook.origin);
    const tested = await restWithKey(flowlog.server.url, alice.key, "POST", testPath(otherSubscription), {});
    expect(tested.status, tested.text).toBe(200);
  }, 120_000);
});

describe("Durability (D19: deliveries run durably on Temporal)", () => {
  it("starts a fan-out that a worker left in the outbox when it died right after the log write (issue 12)", async () => {
    const erin = await createAccount(flowlog.store);
    const workflowId = await saveWorkflow(erin);
    const listener = await receiver();
    const subscriptionId = await subscribe(erin, listener.origin);
    // What writeExecutionLog commits before a process dies: the entry and the intent to notify, in one
    // transaction. Nobody wakes the running worker's dispatcher: it finds the intent by itself.
    const record = execution(erin, workflowId, { startedAt: Date.now() });
    const intent = {
      logId: record.entry.id,
      workspaceId: erin.workspaceId,
      workflowId,
      taskQueue: deliveryTaskQueue(taskQueue),
    };
    expect(await flowlog.store.logs.insertExecution(record, intent)).toBe(true);
    // A retried write of the same execution leaves no second intent.
    expect(await flowlog.store.logs.insertExecution(record, intent)).toBe(false);

    expect(await (await startedFanOut(temporal, record.entry.id)).result()).toBe(1);
    expect(listener.received).toHaveLength(1);
    expect(JSON.parse(listener.received[0]?.body ?? "{}").data.executionId).toBe(record.entry.executionId);
    expect((await deliveriesOf(subscriptionId, erin)).map((d) => d.status)).toEqual(["succeeded"]);
    expect(await flowlog.store.outbox.nextDue()).toBeUndefined();
  });

  it("a worker stopped during a retry wait and restarted still completes the delivery, same delivery id", async () => {
    // Its own queue and unscaled delays: the 5 s wait is long enough to stop one worker and start another.
    const queue = `deliveries-restart-${randomUUID()}`;
    const hook = await receiver((_, response, index) => sendJson(response, index === 0 ? 503 : 200, {}));
    const subscriptionId = await subscribe(alice, hook.origin);
    const delivery = await flowlog.store.deliveries.createOnce({
      id: newId("dlv"),
      eventId: newId("evt"),
      eventType: "workflow.execution.completed",
      subscriptionId,
      workspaceId: alice.workspaceId,
      logId: null,
      event: { id: "evt_restart", type: "workflow.execution.completed", timestamp: Date.now(), data: {} },
      createdAt: Date.now(),
    });
    let first: RunningWorker | undefined = await startWorker(temporalServer, workerDeps(1), queue);
    const handle = await temporal.workflow.start("deliverNotification", {
      workflowId: redeliveryWorkflowId(delivery.id, 1),
      taskQueue: deliveryTaskQueue(queue),
      args: [{ deliveryId: delivery.id, series: 1 }],
    });
    await until("the first attempt", () => (hook.received.length === 1 ? true : undefined));
    await first.stop();
    first = undefined;
    const second = await startWorker(temporalServer, workerDeps(1), queue);
    try {
      expect(await handle.result()).toEqual({ deliveryId: delivery.id, series: 1, status: "succeeded" });
    } finally {
      await second.stop();
    }
    expect(hook.received.map((r) => header(r, "service-delivery-id"))).toEqual([delivery.id, delivery.id]);
    expect(await flowlog.store.deliveries.get(delivery.id)).toMatchObject({
      status: "succeeded",
      attempts: 2,
    });
  }, 60_000);
});

describe("Alert rules on the delivery path (D21)", () => {
  it("delivers the tripping execution's event with data.alert, once per cooldown, to a rule's subscription", async () => {
    const alerts = await receiver();
    const plain = await receiver();
    // An execution's duration is measured in workflow time, so one that does nothing can take 0 ms; this
    // one waits 50 ms for its API block's answer, so a 10 ms rule fires on every run. The level filter is
    // ignored for a rule (D21).
    const slowApi = await receiver(async (_, response) => {
      await sleep(50);
      sendJson(response, 200, { ok: true });
    });
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId, "Slow API", null, {
      ...testWorkflowState,
      blocks: {
        ...testWorkflowState.blocks,
        api: { ...testWorkflowState.blocks.api, config: { url: `${slowApi.origin}/slow`, method: "GET" } },
      },
    });
    const only = { allWorkflows: false, workflowIds: [workflowId] };
    const alerting = await subscribe(alice, alerts.origin, {
      ...only,
      levelFilter: ["error" as Level],
      alertRule: { rule: "latency_threshold", threshold: 0.01, windowHours: null },
    });
    const everyExecution = await subscribe(alice, plain.origin, only);

    const first = await execute(alice, workflowId);
    // The first execution's fan-out has made both its deliveries before the second runs, so the two
    // fan-outs cannot be prepared in either order (the outbox starts them side by side).
    const [delivery] = await until("the first execution's alert delivery", async () => {
      const made = await deliveriesOf(alerting);
      return made.length > 0 && (await deliveriesOf(everyExecution)).length === 1 ? made : undefined;
    });
    await execute(alice, workflowId);
    // One fan-out makes all of an execution's deliveries: once the plain one has both, the rule has spoken.
    await until("both plain deliveries", async () =>
      (await deliveriesOf(everyExecution)).length === 2 ? true : undefined,
    );
    expect(await deliveriesOf(alerting)).toHaveLength(1);
    await settled(alerting);
    const body = JSON.parse(alerts.received[0]?.body ?? "{}");
    expect(delivery?.logId).toBe(first.logId);
    expect(body.type).toBe("workflow.execution.completed");
    expect(body.data.alert).toEqual({
      rule: "latency_threshold",
      reason: expect.stringMatching(/^Execution took [\d.]+ s, above 0\.01 s$/),
      threshold: 0.01,
      observed: expect.any(Number),
      windowHours: null,
      firedAt: body.data.endedAt,
    });
    expect(await flowlog.store.alerts.states(alerting)).toMatchObject([
      { workflowId, rule: "latency_threshold", lastEventId: body.id, reason: body.data.alert.reason },
    ]);
  });
});
