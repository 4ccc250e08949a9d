import { randomUUID } from "node:crypto";
import { InterceptingCall, type Interceptor } from "@grpc/grpc-js";
import { Client, Connection } from "@temporalio/client";
import { temporal as temporalApi } from "@temporalio/proto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { maxDeliverySeries } from "../src/limits/delivery-limits.js";
import { defaultPlanLimits } from "../src/limits/plans.js";
import { defaultQuotas, type Quotas } from "../src/limits/quotas.js";
import { createApi } from "../src/server/api.js";
import type { ApiServer } from "../src/server/api-server.js";
import type { DeliveryRecord } from "../src/store/delivery-rows.js";
import type { SubscriptionSettingsInput } from "../src/store/subscriptions-store.js";
import { lazyTemporalClient } from "../src/temporal/client.js";
import { eventDeliveryWorkflowId, fanOutWorkflowId } from "../src/temporal/delivery-ids.js";
import { recoveryWorkflowId } from "../src/temporal/recovery-ids.js";
import { type RestResponse, restWithKey, startTestApiServer } from "./support/api-server.js";
import {
  notifyingDeps,
  type RunningWorker,
  runToEnd,
  settledDeliveries,
  spawnWorkerProcess,
  startWorker,
} from "./support/engine.js";
import {
  createAccount,
  createWorkflow,
  offlineWorkflowState,
  operatorToken,
  recordFailedDelivery,
  startFlowlog,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { type HttpReceiver, type ReceiverHandler, sendJson, startReceiver } from "./support/http-receiver.js";
import { until, untilApi } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `recovery-${randomUUID()}`;
/** D19's delays divided by 50: a series of five attempts in seconds. */
const delayScale = 0.02;

let flowlog: TestFlowlog;
let worker: RunningWorker;
let connection: Connection;
let temporal: Client;
const servers: ApiServer[] = [];
const receivers: HttpReceiver[] = [];

beforeAll(async () => {
  flowlog = await startFlowlog({ taskQueue });
  worker = await startWorker(
    temporalServer,
    notifyingDeps(flowlog.store, { delivery: { delayScale } }),
    taskQueue,
  );
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
});

afterAll(async () => {
  await worker?.stop();
  await connection?.close();
  await Promise.all(servers.map((s) => s.close()));
  await flowlog?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(handler: ReceiverHandler = (_, response) => sendJson(response, 200, { ok: true })) {
  const started = await startReceiver(handler);
  receivers.push(started);
  return started;
}

/** Another API on the same store: other quotas, or jobs on another worker's queue. */
/**
 * The API of this file's store on a server of its own: with other quotas, another task queue, or with
 * `queryWaitMs` as the most any Temporal query of its waits for a worker (GetRecovery's wait is 10 s).
 */
async function apiWith(options: {
  quotas?: Quotas;
  taskQueue?: string;
  queryWaitMs?: number;
}): Promise<string> {
  const { queryWaitMs } = options;
  const client = lazyTemporalClient(
    temporalServer.address,
    temporalServer.namespace,
    queryWaitMs === undefined ? [] : [queriesWaitingAtMost(queryWaitMs)],
  );
  const api = createApi({
    config: {
      operatorToken,
      publicBaseUrl: "http://flowlog.test",
      planLimits: defaultPlanLimits,
      quotas: options.quotas,
    },
    store: flowlog.store,
    temporal: { client, taskQueue: options.taskQueue ?? taskQueue },
  });
  const server = await startTestApiServer(api);
  servers.push(server);
  return server.url;
}

/** A gRPC deadline of `ms` from now on every QueryWorkflow call, unless the caller's own is sooner. */
function queriesWaitingAtMost(ms: number): Interceptor {
  return (options, nextCall) => {
    if (!options.method_definition.path.endsWith("/QueryWorkflow"))
      return new InterceptingCall(nextCall(options));
    const own = options.deadline === undefined ? Infinity : new Date(options.deadline).getTime();
    const soonest = Math.min(Date.now() + ms, own);
    return new InterceptingCall(nextCall({ ...options, deadline: soonest }));
  };
}

const subscribe = (
  account: TestAccount,
  url: string,
  options: Partial<SubscriptionSettingsInput> & { secret?: string } = {},
) => subscribeWebhook(flowlog.store, account.workspaceId, url, options);

/**
 * Failed deliveries of the subscription as an outage leaves them in the store: each one series of one
 * attempt answered 503, created a second apart from `from`, oldest first.
 */
async function failedDeliveries(
  account: TestAccount,
  subscriptionId: string,
  count: number,
  from = Date.now() - 600_000,
) {
  const made: DeliveryRecord[] = [];
  for (let i = 0; i < count; i++) {
    const subscription = { workspaceId: account.workspaceId, subscriptionId };
    made.push(await recordFailedDelivery(flowlog.store, subscription, from + i * 1_000, { n: i }));
  }
  return made;
}

const recoverPath = (account: TestAccount, subscriptionId: string) =>
  `/api/v1/workspaces/${account.workspaceId}/notifications/${subscriptionId}`;

function recover(account: TestAccount, subscriptionId: string, body: object, base = flowlog.server.url) {
  return restWithKey(base, account.key, "POST", `${recoverPath(account, subscriptionId)}:recover`, body);
}

function getRecovery(account: TestAccount, subscriptionId: string, base = flowlog.server.url) {
  return restWithKey(base, account.key, "GET", `${recoverPath(account, subscriptionId)}/recovery`);
}

interface RecoveryJson {
  id: string;
  status: string;
  total?: number;
  done?: number;
  succeeded?: number;
  failed?: number;
  skipped?: number;
  capped?: boolean;
  endedAt?: string;
}

/** The job once it has ended, read through GetRecovery. */
function ended(account: TestAccount, subscriptionId: string, base = flowlog.server.url, timeoutMs = 30_000) {
  return untilApi(
    `the recovery of ${subscriptionId} to end`,
    async () => {
      const { json } = await getRecovery(account, subscriptionId, base);
      const recovery = (json as { recovery?: RecoveryJson }).recovery;
      return recovery && recovery.status !== "running" ? recovery : undefined;
    },
    timeoutMs,
  );
}

const headerOf = (value: string | string[] | undefined) => String(value);

/** The deliveries' statuses and attempts as the store has them: what a failed expectation shows. */
async function asStored(deliveries: DeliveryRecord[]): Promise<string> {
  const lines = await Promise.all(
    deliveries.map(async ({ id }) => {
      const status = (await flowlog.store.deliveries.get(id))?.status;
      const attempts = (await flowlog.store.deliveries.attemptsOf(id)).map(
        (a) => `${a.series}.${a.attempt} ${a.outcome} ${a.httpStatus ?? "-"} ${a.error ?? ""}`,
      );
      return `${id} ${status}: ${attempts.join("; ")}`;
    }),
  );
  return `the deliveries as stored:\n${lines.join("\n")}`;
}

/** Whether the workflow's whole history, as the server keeps it, holds `text` anywhere (D24). */
async function historyHolds(workflowId: string, text: string): Promise<boolean> {
  const history = await temporal.workflow.getHandle(workflowId).fetchHistory();
  return Buffer.from(temporalApi.api.history.v1.History.encode(history).finish()).includes(text);
}
const oldestFirst = (a: DeliveryRecord, b: DeliveryRecord) =>
  a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1);

describe("Recovery of failed deliveries (D37)", () => {
  it("previews a window's failed deliveries, then sends each again oldest first under its own delivery id and Idempotency-Key", async () => {
    const alice = await createAccount(flowlog.store);
    let up = false;
    // A bad release of the receiver refuses every event with 400: each delivery ends failed at its first
    // attempt, and a 4xx never holds the endpoint (D36), so the deliveries stay failed for recovery.
    const endpoint = await receiver((_, response) => sendJson(response, up ? 200 : 400, {}));
    const secret = "whsec_recovered_never_in_history";
    const subscriptionId = await subscribe(alice, endpoint.origin, { secret });
    const workflowId = await createWorkflow(
      flowlog.store,
      alice.workspaceId,
      "Recovered",
      null,
      offlineWorkflowState,
    );
    const since = new Date(Date.now() - 1_000).toISOString();
    for (let i = 0; i < 3; i++) await runToEnd(temporal, alice, workflowId, { taskQueue });
    const failed = (await settledDeliveries(flowlog.store, alice.workspaceId, subscriptionId, 3)).sort(
      oldestFirst,
    );
    expect(failed.map((d) => [d.status, d.attempts])).toEqual(Array(3).fill(["failed", 1]));
    const sentBefore = endpoint.received.length;

    up = true;
    const preview = await recover(alice, subscriptionId, { since, preview: true });
    expect(preview.status).toBe(200);
    expect(preview.json).toEqual({ failed: 3, beyondLimit: false });
    // A preview starts nothing.
    expect((await getRecovery(alice, subscriptionId)).json).toEqual({});

    const run = await recover(alice, subscriptionId, { since });
    expect(run.status).toBe(200);
    expect(run.json).toMatchObject({
      failed: 3,
      recovery: { id: recoveryWorkflowId(subscriptionId, 1), subscriptionId, status: "running", total: 3 },
    });
    const job = await ended(alice, subscriptionId);
    expect(job).toMatchObject({
      status: "completed",
      total: 3,
      done: 3,
      succeeded: 3,
      failed: 0,
      skipped: 0,
    });

    const resent = endpoint.received.slice(sentBefore);
    expect(resent).toHaveLength(3);
    for (const request of resent) {
      expect(headerOf(request.headers["idempotency-key"])).toBe(
        headerOf(request.headers["service-delivery-id"]),
      );
    }
    expect(resent.map((r) => headerOf(r.headers["service-delivery-id"])).sort()).toEqual(
      failed.map((d) => d.id).sort(),
    );
    // Oldest first: the job scheduled each series in the order the deliveries were made.
    const history = await temporal.workflow.getHandle(job.id).fetchHistory();
    const scheduled = (history.events ?? []).flatMap((event) => {
      const attributes = event.activityTaskScheduledEventAttributes;
      return attributes?.activityType?.name === "attemptDelivery" ? [attributes.activityId] : [];
    });
    expect(scheduled).toEqual(failed.map((d) => d.id));
    // The search reads the payloads: the job's input holds the subscription id, and no secret.
    expect(await historyHolds(job.id, subscriptionId)).toBe(true);
    expect(await historyHolds(job.id, secret)).toBe(false);
    for (const delivery of failed) {
      const attempts = await flowlog.store.deliveries.attemptsOf(delivery.id);
      expect(attempts.at(-1)).toMatchObject({ series: 2, attempt: 1, outcome: "succeeded" });
    }
    expect((await recover(alice, subscriptionId, { since, preview: true })).json).toEqual({
      failed: 0,
      beyondLimit: false,
    });
  });

  it("runs one job per subscription at a time, and a cancelled job ends with what it did, leaving nothing pending", async () => {
    const bob = await createAccount(flowlog.store);
    const endpoint = await receiver();
    const subscriptionId = await subscribe(bob, endpoint.origin, { throttlePerSecond: 5 });
    const failed = await failedDeliveries(bob, subscriptionId, 30);
    const since = new Date(failed[0]?.createdAt ?? 0).toISOString();

    const first = await recover(bob, subscriptionId, { since });
    expect(first.status).toBe(200);
    const second = await recover(bob, subscriptionId, { since });
    expect(second.status).toBe(400);
    expect(second.json).toMatchObject({ code: "failed_precondition" });
    expect(JSON.stringify(second.json)).toContain(recoveryWorkflowId(subscriptionId, 1));

    await until("a few deliveries sent again", () => (endpoint.received.length >= 2 ? true : undefined));
    const cancelled = await restWithKey(
      flowlog.server.url,
      bob.key,
      "POST",
      `${recoverPath(bob, subscriptionId)}:cancelRecovery`,
      {},
    );
    expect(cancelled.status).toBe(200);
    const job = await ended(bob, subscriptionId);
    expect(job.status).toBe("cancelled");
    expect(job.done).toBeLessThan(30);
    expect(job.done).toBe((job.succeeded ?? 0) + (job.skipped ?? 0));
    expect(endpoint.received).toHaveLength(job.succeeded ?? 0);
    const pending = await flowlog.store.deliveries.list(
      { workspaceId: bob.workspaceId, status: "pending" },
      100,
    );
    expect(pending).toEqual([]);
    const again = await restWithKey(
      flowlog.server.url,
      bob.key,
      "POST",
      `${recoverPath(bob, subscriptionId)}:cancelRecovery`,
      {},
    );
    expect(again.status).toBe(400);

    // Once it has ended, the next job takes what is still failed.
    const next = await recover(bob, subscriptionId, { since });
    expect(next.json).toMatchObject({
      failed: 30 - (job.succeeded ?? 0),
      recovery: { id: recoveryWorkflowId(subscriptionId, 2) },
    });
    expect(await ended(bob, subscriptionId)).toMatchObject({
      status: "completed",
      succeeded: 30 - (job.succeeded ?? 0),
    });
    expect(new Set(endpoint.received.map((r) => r.headers["service-delivery-id"])).size).toBe(30);
  });

  it("takes the oldest deliveries up to its limit and says so, and counts a delivery at its last series as skipped", async () => {
    const carol = await createAccount(flowlog.store);
    const endpoint = await receiver();
    const subscriptionId = await subscribe(carol, endpoint.origin);
    const failed = await failedDeliveries(carol, subscriptionId, 5);
    const [oldest] = failed;
    const [attempt] = await flowlog.store.deliveries.attemptsOf(oldest?.id ?? "");
    if (!attempt) throw new Error("the failed delivery has no attempt");
    // The oldest has had its 20 redeliveries (D40): its last series failed too.
    await flowlog.store.deliveries.recordAttempt({ ...attempt, series: maxDeliverySeries }, "failed");
    const capped = await apiWith({ quotas: { ...defaultQuotas, recoveryDeliveries: 3 } });
    const since = new Date(oldest?.createdAt ?? 0).toISOString();

    const preview = await recover(carol, subscriptionId, { since, preview: true }, capped);
    expect(preview.json).toEqual({ failed: 3, beyondLimit: true });
    const run = await recover(carol, subscriptionId, { since }, capped);
    expect(run.json).toMatchObject({ recovery: { total: 3, capped: true } });
    expect(await ended(carol, subscriptionId, capped)).toMatchObject({
      status: "completed",
      total: 3,
      done: 3,
      succeeded: 2,
      skipped: 1,
      capped: true,
    });
    expect(endpoint.received.map((r) => r.headers["service-delivery-id"]).sort()).toEqual(
      failed
        .slice(1, 3)
        .map((d) => d.id)
        .sort(),
    );
    const statuses = await Promise.all(
      failed.map(async (d) => (await flowlog.store.deliveries.get(d.id))?.status),
    );
    expect(statuses).toEqual(["failed", "succeeded", "succeeded", "failed", "failed"]);
  });

  it("refuses a bad window naming the field, a disabled subscription naming the way out, and another workspace's", async () => {
    const dave = await createAccount(flowlog.store);
    const erin = await createAccount(flowlog.store);
    const subscriptionId = await subscribe(dave, "http://127.0.0.1:9/never");
    const refusal = (response: RestResponse) => [response.status, JSON.stringify(response.json)] as const;

    const [noSince, noSinceBody] = refusal(await recover(dave, subscriptionId, { preview: true }));
    expect(noSince).toBe(400);
    expect(noSinceBody).toContain("since");
    const [badSince, badSinceBody] = refusal(await recover(dave, subscriptionId, { since: "yesterday" }));
    expect(badSince).toBe(400);
    expect(badSinceBody).toContain("since");
    const [backwards, backwardsBody] = refusal(
      await recover(dave, subscriptionId, { since: "2026-11-14T10:00:00Z", until: "2026-11-14T09:00:00Z" }),
    );
    expect(backwards).toBe(400);
    expect(backwardsBody).toContain("until");

    await flowlog.store.notifications.setActive(subscriptionId, false, Date.now());
    const disabled = await recover(dave, subscriptionId, { since: "2026-11-14" });
    expect(disabled.status).toBe(400);
    expect(disabled.json).toMatchObject({ code: "failed_precondition" });
    expect(JSON.stringify(disabled.json)).toContain(":enable");

    // Another workspace's subscription: its workspace refuses the caller (D10), and from the caller's own
    // workspace it is not found.
    const intruding = await restWithKey(
      flowlog.server.url,
      erin.key,
      "POST",
      `${recoverPath(dave, subscriptionId)}:recover`,
      {
        since: "2026-11-14",
      },
    );
    expect(intruding.status).toBe(403);
    expect((await recover(erin, subscriptionId, { since: "2026-11-14" })).status).toBe(404);
  });
});

describe("Recovery without a worker (D37)", () => {
  it("a job no deliveries worker runs starts, and its progress is unavailable, naming the job, not an error", async () => {
    const hana = await createAccount(flowlog.store);
    const subscriptionId = await subscribe(hana, "http://127.0.0.1:9/never");
    const [oldest] = await failedDeliveries(hana, subscriptionId, 1);
    // What is promised is the answer when no worker answers, not the length of the wait for one.
    const unpolled = await apiWith({ taskQueue: `recovery-unpolled-${randomUUID()}`, queryWaitMs: 1_000 });
    const since = new Date(oldest?.createdAt ?? 0).toISOString();
    const run = await recover(hana, subscriptionId, { since }, unpolled);
    expect(run.json).toMatchObject({ recovery: { status: "running", total: 1, done: 0 } });
    try {
      const progress = await getRecovery(hana, subscriptionId, unpolled);
      expect(progress.status).toBe(503);
      expect(JSON.stringify(progress.json)).toContain(recoveryWorkflowId(subscriptionId, 1));
    } finally {
      await temporal.workflow.getHandle(recoveryWorkflowId(subscriptionId, 1)).terminate("test over");
    }
  }, 30_000);
});

describe("The delivery.failed event (D38)", () => {
  it("tells the subscriptions that take it which delivery failed, without secrets, and a failed one tells nobody", async () => {
    const frank = await createAccount(flowlog.store);
    const secret = "whsec_recovery_never_shown_0123";
    const broken = await receiver((_, response) => sendJson(response, 400, { error: "bad request" }));
    const monitor = await receiver();
    const brokenMonitor = await receiver((_, response) => sendJson(response, 410, {}));
    const failing = await subscribe(frank, broken.origin, { secret });
    const watching = await subscribe(frank, monitor.origin, { eventTypes: ["delivery.failed"] });
    await subscribe(frank, brokenMonitor.origin, { eventTypes: ["delivery.failed"] });
    const workflowId = await createWorkflow(
      flowlog.store,
      frank.workspaceId,
      "Watched",
      null,
      offlineWorkflowState,
    );

    await runToEnd(temporal, frank, workflowId, { taskQueue });
    const [delivery] = await settledDeliveries(flowlog.store, frank.workspaceId, failing);
    const [told] = await settledDeliveries(flowlog.store, frank.workspaceId, watching);
    // Both deliveries of the event have run to their end, the failed one's announcement included.
    await temporal.workflow.getHandle(eventDeliveryWorkflowId(told?.eventId ?? "")).result();

    expect(monitor.received).toHaveLength(1);
    const request = monitor.received[0];
    expect(request?.headers["service-event"]).toBe("delivery.failed");
    expect(JSON.parse(request?.body ?? "")).toEqual({
      id: told?.eventId,
      type: "delivery.failed",
      timestamp: expect.any(Number),
      data: {
        deliveryId: delivery?.id,
        subscriptionId: failing,
        eventId: delivery?.eventId,
        eventType: "workflow.execution.completed",
        series: 1,
        attempts: 1,
        lastHttpStatus: 400,
        lastError: expect.any(String),
        failedAt: expect.any(String),
      },
    });
    expect(request?.body).not.toContain(secret);
    expect(request?.body).not.toContain(broken.origin);
    for (const workflowId of [
      fanOutWorkflowId(delivery?.logId ?? ""),
      eventDeliveryWorkflowId(told?.eventId ?? ""),
    ])
      expect(await historyHolds(workflowId, secret)).toBe(false);
    // The monitor that answered 410 failed its delivery.failed: that made no further event.
    expect(brokenMonitor.received).toHaveLength(1);
    const events = await flowlog.store.deliveries.list(
      { workspaceId: frank.workspaceId, eventType: "delivery.failed" },
      100,
    );
    expect(events.map((d) => d.status).sort()).toEqual(["failed", "succeeded"]);
  });
});

describe("Recovery across a worker's death (D37, D19)", () => {
  it("a recovery job whose worker is SIGKILLed resumes on another: nothing lost, nothing under two keys", async () => {
    const gina = await createAccount(flowlog.store);
    const endpoint = await receiver();
    const subscriptionId = await subscribe(gina, endpoint.origin, { throttlePerSecond: 4 });
    const failed = await failedDeliveries(gina, subscriptionId, 16);
    const killQueue = `recovery-kill-${randomUUID()}`;
    const api = await apiWith({ taskQueue: killQueue });
    const doomed = await spawnWorker(killQueue);
    try {
      const run = await recover(
        gina,
        subscriptionId,
        { since: new Date(failed[0]?.createdAt ?? 0).toISOString() },
        api,
      );
      expect(run.status).toBe(200);
      await until("a few deliveries sent again", () => (endpoint.received.length >= 4 ? true : undefined));
      doomed.kill("SIGKILL");
      const replacement = await spawnWorker(killQueue);
      try {
        const job = await ended(gina, subscriptionId, api, 45_000);
        expect(job, await asStored(failed)).toMatchObject({
          status: "completed",
          total: 16,
          done: 16,
          succeeded: 16,
        });
      } finally {
        replacement.kill("SIGTERM");
      }
    } finally {
      doomed.kill("SIGKILL");
    }
    const ids = failed.map((d) => d.id).sort();
    expect(
      [...new Set(endpoint.received.map((r) => headerOf(r.headers["service-delivery-id"])))].sort(),
    ).toEqual(ids);
    for (const request of endpoint.received) {
      expect(headerOf(request.headers["idempotency-key"])).toBe(
        headerOf(request.headers["service-delivery-id"]),
      );
    }
    const statuses = await Promise.all(
      failed.map(async (d) => (await flowlog.store.deliveries.get(d.id))?.status),
    );
    expect(new Set(statuses)).toEqual(new Set(["succeeded"]));
  }, 90_000);
});

/** A flowlog worker in a process of its own on `queue`, over this file's store. */
const spawnWorker = (queue: string) =>
  spawnWorkerProcess(temporalServer, queue, flowlog.dataDir, flowlog.env);
