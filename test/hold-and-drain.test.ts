import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Client, Connection } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/config.js";
import type { AutoDisablePolicy } from "../src/domain/auto-disable.js";
import type { HoldBounds } from "../src/domain/hold-policy.js";
import { probeStepsMs, probeWaitMs } from "../src/domain/hold-policy.js";
import type { ActivityDeps } from "../src/temporal/activities/index.js";
import { deliveryTaskQueue } from "../src/temporal/delivery-ids.js";
import { watchFailingEndpoint } from "../src/temporal/start-endpoint-watch.js";
import { newId } from "../src/util/ids.js";
import { restWithKey } from "./support/api-server.js";
import { notifyingDeps, type RunningWorker, runToEnd, startWorker } from "./support/engine.js";
import {
  createAccount,
  createWorkflow,
  offlineWorkflowState,
  startFlowlog,
  subscribe,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { type HttpReceiver, receiversClosedAfterAll, sendJson } from "./support/http-receiver.js";
import { type SmtpServer, startSmtpServer } from "./support/smtp-server.js";
import { until } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };

/**
 * D19's schedule and D36's probe backoff divided by 500: an hour of probes (1, 2, 4, 8, 16, 30 minutes)
 * passes in about 7 s. (The dev server rounds the shortest waits up to about a second.)
 */
const delayScale = 0.002;
const taskQueue = `hold-${randomUUID()}`;
/** A second worker with a hold of 3 deliveries and D35 shrunk to seconds: the bounds and the disable. */
const boundedQueue = `hold-bounded-${randomUUID()}`;
const bounded: HoldBounds = { maxDeliveries: 3, maxAgeMs: 3_600_000 };
const quickDisable: AutoDisablePolicy = { failingForMs: 7_000, noticeMs: 3_000, minFailures: 3 };

let flowlog: TestFlowlog;
let smtp: SmtpServer;
let workers: RunningWorker[] = [];
let connection: Connection;
let temporal: Client;
const receiver = receiversClosedAfterAll();

function workerDeps(extra: { hold?: HoldBounds; autoDisable?: AutoDisablePolicy } = {}): ActivityDeps {
  return notifyingDeps(flowlog.store, { smtpUrl: smtp.url, delivery: { delayScale }, ...extra });
}

beforeAll(async () => {
  smtp = await startSmtpServer({ user: "flowlog", password: "smtp-password", replies: {} });
  flowlog = await startFlowlog({ taskQueue });
  workers = [
    await startWorker(temporalServer, workerDeps(), taskQueue),
    await startWorker(temporalServer, workerDeps({ hold: bounded, autoDisable: quickDisable }), boundedQueue),
  ];
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()));
  await connection?.close();
  await flowlog?.close();
  await smtp?.close();
});

/** One request as the endpoint saw it, with the answer it gave. */
interface Hit {
  deliveryId: string;
  idempotencyKey: string;
  eventId: string;
  eventType: string;
  timestamp: number;
  status: number;
  at: number;
}

/** A receiver answering `answer.status` (503 unless a test changes it), recording every request. */
async function endpoint(status = 503, delayMs = 0) {
  const answer = { status };
  const hits: Hit[] = [];
  const started: HttpReceiver = await receiver(async (request, response) => {
    const event = JSON.parse(request.body) as { id: string; type: string; timestamp: number };
    const status = answer.status;
    if (delayMs > 0) await sleep(delayMs);
    hits.push({
      deliveryId: String(request.headers["service-delivery-id"]),
      idempotencyKey: String(request.headers["idempotency-key"]),
      eventId: event.id,
      eventType: event.type,
      timestamp: event.timestamp,
      status,
      at: Date.now(),
    });
    sendJson(response, status, { status });
  });
  return Object.assign(started, { answer, hits });
}

async function workspace(): Promise<{ account: TestAccount; workflowId: string }> {
  const account = await createAccount(flowlog.store);
  const workflowId = await createWorkflow(
    flowlog.store,
    account.workspaceId,
    "Hold test",
    null,
    offlineWorkflowState,
  );
  return { account, workflowId };
}

/** An e-mail subscription of the workspace that hears only notices: the test's executions all succeed. */
async function mailbox(account: TestAccount): Promise<string> {
  const address = `ops-${randomUUID()}@example.test`;
  await subscribe(
    flowlog.store,
    account.workspaceId,
    { channel: "email", recipients: [address] },
    { levelFilter: ["error"] },
  );
  return address;
}

const run = ({ account, workflowId }: { account: TestAccount; workflowId: string }, queue = taskQueue) =>
  runToEnd(temporal, account, workflowId, { taskQueue: queue });

const holdState = async (subscriptionId: string) => (await flowlog.store.holds.status(subscriptionId))?.state;

const deliveriesOf = (account: TestAccount, subscriptionId: string) =>
  flowlog.store.deliveries.list({ workspaceId: account.workspaceId, subscriptionId }, 1000);

async function subscriptionJson(account: TestAccount, id: string): Promise<Record<string, unknown>> {
  const response = await restWithKey(
    flowlog.server.url,
    account.key,
    "GET",
    `/api/v1/workspaces/${account.workspaceId}/notifications/${id}`,
  );
  expect(response.status, response.text).toBe(200);
  return (response.json as { subscription: Record<string, unknown> }).subscription;
}

/** Hits by one of their fields, in the order of each value's first hit. */
function groupBy(hits: readonly Hit[], key: (hit: Hit) => string): Map<string, Hit[]> {
  const groups = new Map<string, Hit[]>();
  for (const hit of hits) groups.set(key(hit), [...(groups.get(key(hit)) ?? []), hit]);
  return groups;
}

/** Runs an execution every `everyMs` until stopped; resolves to how many ran. */
function keepExecuting(target: { account: TestAccount; workflowId: string }, everyMs: number) {
  let stopped = false;
  let ran = 0;
  const done = (async () => {
    while (!stopped) {
      await run(target);
      ran++;
      await sleep(everyMs);
    }
    return ran;
  })();
  return {
    stop: () => {
      stopped = true;
      return done;
    },
  };
}

describe("D36 the probe's backoff", () => {
  it("waits 1, 2, 4, 8, 16, then every 30 minutes, each plus at most 10 % jitter, scaled", () => {
    const minutes = [1, 2, 4, 8, 16, 30, 30, 30];
    for (const [probes, step] of minutes.entries()) {
      expect(probeWaitMs(probes, 1, () => 0)).toBe(step * 60_000);
      expect(probeWaitMs(probes, 1, () => 0.999_999)).toBe(Math.round(step * 60_000 * 1.1));
      expect(probeWaitMs(probes, 0.002, () => 0)).toBe(Math.round(step * 60_000 * 0.002));
    }
    expect(probeStepsMs.at(-1)).toBe(30 * 60_000);
  });
});

describe("D36 the hold's bounds (FLOWLOG_HOLD)", () => {
  it("are 10,000 deliveries and 7 days unless FLOWLOG_HOLD changes either; a bad value stops the start naming its path", () => {
    expect(loadConfig({}).hold).toEqual({ maxDeliveries: 10_000, maxAgeMs: 7 * 24 * 3_600_000 });
    expect(loadConfig({ FLOWLOG_HOLD: '{"maxAgeHours": 72}' }).hold).toEqual({
      maxDeliveries: 10_000,
      maxAgeMs: 72 * 3_600_000,
    });
    const problemsOf = (value: string) => {
      try {
        loadConfig({ FLOWLOG_HOLD: value });
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      return [];
    };
    expect(problemsOf('{"maxDeliveries": 0}')).toEqual([
      "FLOWLOG_HOLD.maxDeliveries: must be a positive integer",
    ]);
    expect(problemsOf('{"days": 5}')).toEqual([expect.stringMatching(/^FLOWLOG_HOLD\.days: unknown/)]);
    expect(problemsOf("a week")).toEqual(["FLOWLOG_HOLD: must be JSON"]);
  });
});

describe("D36 hold and drain: a receiver down for an hour while events keep coming (time scaled)", () => {
  it("every event arrives once per delivery id and Idempotency-Key, in order; held deliveries cost no attempts; the workspace is told", async () => {
    const target = await workspace();
    const { account } = target;
    const hook = await endpoint(503);
    const ops = await endpoint(200);
    const mail = await mailbox(account);
    const id = await subscribeWebhook(flowlog.store, account.workspaceId, hook.origin);
    await subscribeWebhook(flowlog.store, account.workspaceId, ops.origin, {
      eventTypes: ["subscription.held", "subscription.released"],
    });

    const feeding = keepExecuting(target, 150);
    await until(
      "the endpoint held",
      async () => ((await holdState(id)) === "held" ? true : undefined),
      60_000,
    );
    const heldAt = (await flowlog.store.holds.status(id))?.heldAt as number;
    const held = await subscriptionJson(account, id);
    expect(held).toMatchObject({ state: "held", heldSince: new Date(heldAt).toISOString() });
    expect(held.heldCount).toBeGreaterThanOrEqual(3);

    // An hour of outage: the probe's six steps (1 + 2 + 4 + 8 + 16 + 30 minutes), events coming all along.
    const settledAt = heldAt + 500;
    const probes = () => hook.hits.filter((hit) => hit.at > settledAt);
    await until("six probes", () => (probes().length >= 6 ? true : undefined), 60_000);
    const upAt = Date.now();
    hook.answer.status = 200;
    await sleep(300);
    const ran = await feeding.stop();
    await until(
      "the drain's end",
      async () => ((await holdState(id)) === "active" ? true : undefined),
      60_000,
    );
    await until("every delivery settled", async () => {
      const all = await deliveriesOf(account, id);
      return all.length === ran && all.every((d) => d.status === "succeeded") ? all : undefined;
    });

    // Held deliveries cost no attempts: while held, only the probe called, one request a step, each with
    // the oldest held event. A series that was waiting out a retry when the hold began is held at its next
    // attempt; its event, older, is what the next probe sends.
    // An attempt that found the endpoint active may still reach it after the hold began: its check reads
    // the hold before the hold's transaction commits (heldAt is that transaction's clock), and a loaded
    // machine stretches the time from that check to the send (a run at a load of 13 on two cores started
    // four such attempts 187 to 256 ms after heldAt). The first probe waits its first step after the hold
    // committed, and its attempts form a series of their own (hold-activities.ts): the first series begun
    // after that step is the probe's, and no attempt begun before it is a probe. Each of those is matched
    // to its request by delivery id and time, as the attempt log has it, and set aside. (While one of them
    // is in flight its delivery is not held, so no probe sends that delivery then.) An attempt held back
    // wrongly after the first probe still counts, and breaks the probes' spacing below.
    const attempts = await Promise.all(
      (await deliveriesOf(account, id)).map((d) => flowlog.store.deliveries.attemptsOf(d.id)),
    );
    const firstProbeAt = heldAt + (probeStepsMs[0] as number) * delayScale;
    const seriesBegun = new Map<string, number>();
    for (const a of attempts.flat()) {
      const series = `${a.deliveryId}/${a.series}`;
      seriesBegun.set(series, Math.min(seriesBegun.get(series) ?? a.startedAt, a.startedAt));
    }
    const probeBegun = Math.min(...[...seriesBegun.values()].filter((at) => at >= firstProbeAt));
    const begunBefore = attempts.flat().filter((a) => a.startedAt < probeBegun);
    const ordinary = (hit: Hit) =>
      begunBefore.some(
        (a) =>
          a.deliveryId === hit.deliveryId && hit.at >= a.startedAt && hit.at <= a.startedAt + a.durationMs,
      );
    const whileHeld = hook.hits.filter((hit) => hit.at > heldAt && hit.at < upAt && !ordinary(hit));
    const timeline = JSON.stringify({
      heldAt,
      upAt,
      hits: hook.hits.filter((hit) => hit.at > heldAt - 2_000 && hit.at < upAt).map((hit) => hit.at),
      begunBefore: begunBefore.map((a) => [a.startedAt, a.durationMs, a.outcome]),
    });
    expect(whileHeld.length, timeline).toBeGreaterThanOrEqual(4);
    const probed = whileHeld.map((hit) => hit.timestamp);
    expect(probed).toEqual([...probed].sort((a, b) => b - a));
    const gaps = whileHeld.slice(1).map((hit, n) => hit.at - (whileHeld[n] as Hit).at);
    // Each request counted as a probe, with the attempts the log has for its delivery: if one comes early,
    // the failure says whether it was a probe or an attempt the filter above did not set aside.
    const probeTimeline = JSON.stringify(
      whileHeld.map((hit) => ({
        at: hit.at - heldAt,
        deliveryId: hit.deliveryId,
        attempts: attempts
          .flat()
          .filter((a) => a.deliveryId === hit.deliveryId)
          .map((a) => [a.startedAt - heldAt, a.durationMs, a.outcome]),
      })),
    );
    for (const [n, gap] of gaps.entries()) {
      expect(gap, probeTimeline).toBeGreaterThanOrEqual((probeStepsMs[n + 1] as number) * delayScale - 50);
    }

    // Each delivery acknowledged once, always under its own id as the Idempotency-Key.
    const acknowledged = hook.hits.filter((hit) => hit.status === 200);
    const perDelivery = groupBy(acknowledged, (hit) => hit.deliveryId);
    expect(perDelivery.size).toBe(ran);
    expect([...perDelivery.values()].every((hits) => hits.length === 1)).toBe(true);
    expect(hook.hits.every((hit) => hit.idempotencyKey === hit.deliveryId)).toBe(true);
    expect(new Set(acknowledged.map((hit) => hit.eventId)).size).toBe(ran);
    expect(hook.hits.every((hit) => hit.eventType === "workflow.execution.completed")).toBe(true);

    // In order: what the outage kept arrived oldest first.
    const outage = acknowledged.filter((hit) => hit.timestamp < upAt).map((hit) => hit.timestamp);
    expect(outage.length).toBeGreaterThan(6);
    expect(outage).toEqual([...outage].sort((a, b) => a - b));

    expect(await subscriptionJson(account, id)).toMatchObject({ state: "active" });
    expect(await subscriptionJson(account, id)).not.toHaveProperty("heldSince");

    // Told: the operational subscriber got both events about this endpoint, and so did the mailbox.
    await until("the held and released events", () => (ops.hits.length >= 2 ? true : undefined));
    expect(ops.hits.map((hit) => hit.eventType).sort()).toEqual([
      "subscription.held",
      "subscription.released",
    ]);
    const mails = await until("two notices by e-mail", () => {
      const to = smtp.received.filter((m) => m.rcptTo.includes(mail));
      return to.length >= 2 ? to : undefined;
    });
    expect(mails.map((m) => m.parsed.subject?.split(":")[0]).sort()).toEqual([
      "Endpoint held",
      "Endpoint released",
    ]);
  });

  it("a 4xx never holds, and breaks the run of exhausted deliveries", async () => {
    const target = await workspace();
    const hook = await endpoint(503);
    const id = await subscribeWebhook(flowlog.store, target.account.workspaceId, hook.origin);
    const settled = async (count: number) =>
      until(`${count} settled`, async () => {
        const all = await deliveriesOf(target.account, id);
        return all.filter((d) => d.status === "failed").length >= count ? true : undefined;
      });
    await Promise.all([run(target), run(target)]);
    await settled(2);
    hook.answer.status = 410;
    await run(target);
    await settled(3);
    hook.answer.status = 503;
    await Promise.all([run(target), run(target)]);
    await settled(5);
    expect(await holdState(id)).toBe("active");
    hook.answer.status = 410;
    await Promise.all([run(target), run(target), run(target), run(target)]);
    await settled(9);
    expect(await holdState(id)).toBe("active");
    expect((await deliveriesOf(target.account, id)).every((d) => d.status === "failed")).toBe(true);
  });
});

describe("D36 and its owner", () => {
  it("disabling a held endpoint stops its probe at once: no request reaches it after, its held deliveries end subscription_disabled", async () => {
    const target = await workspace();
    const { account } = target;
    const hook = await endpoint(503);
    const id = await subscribeWebhook(flowlog.store, account.workspaceId, hook.origin);
    await Promise.all(Array.from({ length: 3 }, () => run(target)));
    await until(
      "the endpoint held",
      async () => ((await holdState(id)) === "held" ? true : undefined),
      60_000,
    );
    // Each of the three series has made its last attempt: the next request is the hold's first probe. After
    // it the watcher plans the next and sleeps until then (about a second here, 2 minutes in production):
    // the owner disables the endpoint in that sleep, after the plan that found it enabled.
    const seriesHits = hook.hits.length;
    await until("the first probe", () => (hook.hits.length > seriesHits ? true : undefined), 30_000);
    await sleep(300);
    const disabled = await restWithKey(
      flowlog.server.url,
      account.key,
      "POST",
      `/api/v1/workspaces/${account.workspaceId}/notifications/${id}:disable`,
      {},
    );
    expect(disabled.status, disabled.text).toBe(200);
    const disabledAt = Date.now();

    const ended = await until(
      "the held deliveries ended",
      async () => {
        const all = await deliveriesOf(account, id);
        return all.length === 3 && all.every((d) => d.status === "failed") ? all : undefined;
      },
      60_000,
    );
    expect(ended.every((d) => d.lastError?.startsWith("subscription_disabled"))).toBe(true);
    // Past the time the next probe was due: still nothing went to the disabled endpoint.
    await sleep(Math.max(0, disabledAt + 2_000 - Date.now()));
    const seen = JSON.stringify(hook.hits.map((hit) => [hit.at - disabledAt, hit.deliveryId]));
    expect(
      hook.hits.filter((hit) => hit.at > disabledAt),
      seen,
    ).toEqual([]);
    expect(await holdState(id)).toBe("active");
  });
});

describe("D36 bounds and D35's disable (a hold of 3 deliveries, D35 in seconds)", () => {
  it("past the hold's count the oldest end failed with hold_limit; the disable ends the rest with subscription_disabled and tells the workspace; recovery sends them all once the receiver is back", async () => {
    const began = Date.now();
    const target = await workspace();
    const { account } = target;
    const hook = await endpoint(503);
    const ops = await endpoint(200);
    const id = await subscribeWebhook(flowlog.store, account.workspaceId, hook.origin);
    await subscribeWebhook(flowlog.store, account.workspaceId, ops.origin, {
      eventTypes: ["subscription.disabled"],
    });
    await Promise.all(Array.from({ length: 3 }, () => run(target, boundedQueue)));
    await until(
      "the endpoint held",
      async () => ((await holdState(id)) === "held" ? true : undefined),
      60_000,
    );
    await Promise.all(Array.from({ length: 4 }, () => run(target, boundedQueue)));

    // Seven made, three kept: the four oldest by event time (an execution's end) ended failed.
    const trimmed = await until("the hold trimmed to its bound", async () => {
      const all = await deliveriesOf(account, id);
      const limited = all.filter((d) => d.lastError?.startsWith("hold_limit"));
      const held = all.filter((d) => d.status === "held");
      return all.length === 7 && limited.length === 4 && held.length === 3 ? all : undefined;
    });
    const eventTimes = new Map<string, number>();
    for (const delivery of trimmed) {
      const { event } = (await flowlog.store.deliveries.get(delivery.id)) ?? {};
      eventTimes.set(delivery.id, (event as { timestamp: number }).timestamp);
    }
    // Equal times go by id, as the hold orders them.
    const oldestFirst = trimmed.toSorted(
      (a, b) => (eventTimes.get(a.id) ?? 0) - (eventTimes.get(b.id) ?? 0) || (a.id < b.id ? -1 : 1),
    );
    const seen = JSON.stringify(oldestFirst.map((d) => [eventTimes.get(d.id), d.id, d.status, d.lastError]));
    expect(
      oldestFirst.map((d) => d.status),
      seen,
    ).toEqual(["failed", "failed", "failed", "failed", "held", "held", "held"]);
    expect(oldestFirst.slice(0, 4).every((d) => d.lastError?.startsWith("hold_limit:"))).toBe(true);

    await until("disabled by D35", async () =>
      (await flowlog.store.notifications.get(id))?.active === false ? true : undefined,
    );
    const ended = await until("the held ones failed", async () => {
      const now = await deliveriesOf(account, id);
      return now.every((d) => d.status === "failed") ? now : undefined;
    });
    expect(ended.filter((d) => d.lastError?.startsWith("subscription_disabled"))).toHaveLength(3);
    expect(await holdState(id)).toBe("active");
    await until("the disabled event", () => (ops.hits.length >= 1 ? true : undefined));
    expect(ops.hits[0]).toMatchObject({ eventType: "subscription.disabled" });

    // The receiver is back after an outage longer than the hold's bounds: its owner enables the endpoint and
    // recovers the window (D37). Every delivery of the outage arrives, each once under its own delivery id.
    hook.answer.status = 200;
    const subscriptionPath = `/api/v1/workspaces/${account.workspaceId}/notifications/${id}`;
    const api = (method: string, path: string, body?: unknown) =>
      restWithKey(flowlog.server.url, account.key, method, `${subscriptionPath}${path}`, body);
    expect((await api("POST", ":enable", {})).status).toBe(200);
    const since = new Date(began - 1_000).toISOString();
    expect((await api("POST", ":recover", { since, preview: true })).json).toEqual({
      failed: 7,
      beyondLimit: false,
    });
    expect((await api("POST", ":recover", { since })).status).toBe(200);
    const job = await until("the recovery to end", async () => {
      const { recovery } = (await api("GET", "/recovery")).json as { recovery?: { status: string } };
      return recovery && recovery.status !== "running" ? recovery : undefined;
    });
    expect(job).toMatchObject({ status: "completed", total: 7, succeeded: 7, failed: 0, skipped: 0 });
    const delivered = hook.hits.filter((hit) => hit.status === 200);
    expect(delivered.map((hit) => hit.deliveryId).toSorted()).toEqual(trimmed.map((d) => d.id).toSorted());
    expect(delivered.every((hit) => hit.idempotencyKey === hit.deliveryId)).toBe(true);
    expect((await deliveriesOf(account, id)).every((d) => d.status === "succeeded")).toBe(true);
  });
});

describe("D36 a worker SIGKILLed during a drain", () => {
  const workerScript = fileURLToPath(new URL("./support/engine-worker-process.ts", import.meta.url));

  async function workerProcess(queue: string): Promise<{ child: ChildProcess; exited: Promise<unknown> }> {
    const output: string[] = [];
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        workerScript,
        temporalServer.address,
        temporalServer.namespace,
        queue,
        flowlog.dataDir,
      ],
      {
        env: { ...process.env, ...flowlog.env, FLOWLOG_TEST_DELAY_SCALE: String(delayScale) },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => output.push(chunk));
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => output.push(chunk));
    const exited = once(child, "exit");
    await until(
      "the worker process to poll",
      () => (output.join("").includes("ready") ? true : undefined),
      90_000,
    );
    return { child, exited };
  }

  it("loses nothing and sends nothing under two keys; every event arrives, first receipts in order", async () => {
    const queue = `hold-kill-${randomUUID()}`;
    const { account } = await workspace();
    const hook = await endpoint(200, 3);
    const id = await subscribeWebhook(flowlog.store, account.workspaceId, hook.origin);
    const count = 200;
    const t0 = Date.now() - 60_000;
    const { store } = flowlog;
    // The endpoint held as three exhausted deliveries hold it, then the outage's deliveries recorded held.
    for (let n = 0; n < count; n++) {
      const eventId = newId("evt");
      const delivery = await store.deliveries.createOnce({
        id: newId("dlv"),
        eventId,
        eventType: "workflow.execution.completed",
        subscriptionId: id,
        workspaceId: account.workspaceId,
        logId: null,
        event: { id: eventId, type: "workflow.execution.completed", timestamp: t0 + n, data: { n } },
        createdAt: t0 + n,
      });
      if (n < 3) {
        await store.deliveries.recordAttempt(
          {
            deliveryId: delivery.id,
            series: 1,
            attempt: 5,
            startedAt: t0 + n,
            durationMs: 1,
            outcome: "failed",
            httpStatus: 503,
            responseSnippet: null,
            error: "receiver answered 503",
          },
          "failed",
          { exhausted: true },
        );
      }
    }
    expect(await store.holds.heldCount(id)).toBe(count);

    const doomed = await workerProcess(queue);
    await watchFailingEndpoint(
      temporal,
      { subscriptionId: id, workspaceId: account.workspaceId },
      deliveryTaskQueue(queue),
    );
    await until("a third drained", () => (hook.hits.length >= count / 3 ? true : undefined), 60_000);
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    const killedAt = hook.hits.length;
    expect(killedAt).toBeLessThan(count);

    const replacement = await workerProcess(queue);
    try {
      await until(
        "the drain's end",
        async () => ((await holdState(id)) === "active" ? true : undefined),
        90_000,
      );
    } finally {
      replacement.child.kill("SIGTERM");
      await replacement.exited;
    }
    const all = await deliveriesOf(account, id);
    expect(all.filter((d) => d.status === "succeeded")).toHaveLength(count);
    const byEvent = groupBy(hook.hits, (hit) => hit.eventId);
    expect(byEvent.size).toBe(count);
    for (const hits of byEvent.values()) {
      expect(new Set(hits.map((hit) => hit.deliveryId)).size).toBe(1);
      expect(hits.every((hit) => hit.idempotencyKey === hit.deliveryId)).toBe(true);
    }
    // The map keeps each event where it first arrived: oldest first, a resend after the kill only repeats.
    const firstReceipts = [...byEvent.values()].map((hits) => (hits[0] as Hit).timestamp);
    expect(firstReceipts).toEqual([...firstReceipts].sort((a, b) => a - b));
    // Its own waits allow 60 s to the kill and 90 s to the drain's end: the default 60 s cut it short on a
    // slower machine (a drain of 200 through a worker process, PostgreSQL store, both cores busy).
  }, 240_000);
});
