import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Client, Connection } from "@temporalio/client";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Level } from "../src/store/records.js";
import { fanOutWorkflowId, testDeliveryWorkflowId } from "../src/temporal/delivery-ids.js";
import { restWithKey } from "./support/api-server.js";
import { notifyingDeps, type RunningWorker, settledDeliveries, startWorker } from "./support/engine.js";
import {
  createAccount,
  createWorkflow,
  execution,
  startFlowlog,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { type ReceivedRequest, receiversClosedAfterAll, sendJson } from "./support/http-receiver.js";
import { ensureStandardWebhooks, runPython } from "./support/python.js";
import { until } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `endpoint-settings-${randomUUID()}`;

let flowlog: TestFlowlog;
let worker: RunningWorker;
let connection: Connection;
let temporal: Client;
let alice: TestAccount;
const receiver = receiversClosedAfterAll();

beforeAll(async () => {
  flowlog = await startFlowlog({ taskQueue });
  worker = await startWorker(
    temporalServer,
    // D19's first retry after 5 s comes after 0.1 s: a retry is seen within the test.
    notifyingDeps(flowlog.store, { delivery: { delayScale: 0.02 } }),
    taskQueue,
  );
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
  alice = await createAccount(flowlog.store);
});

afterAll(async () => {
  await worker?.stop();
  await connection?.close();
  await flowlog?.close();
});

type Json = Record<string, unknown>;
interface SubscriptionJson extends Json {
  id: string;
  webhook?: Json & { headerNames?: string[]; signatureScheme?: string };
}

/** Every answer the API gave in this file, as text: what must never hold a header value or a secret. */
const answers: string[] = [];

async function call(method: string, path: string, body?: unknown) {
  const response = await restWithKey(flowlog.server.url, alice.key, method, path, body);
  answers.push(response.text);
  expect(response.status, response.text).toBe(200);
  return response.json as Json;
}

const notifications = () => `/api/v1/workspaces/${alice.workspaceId}/notifications`;

async function subscribe(body: Json): Promise<{ subscription: SubscriptionJson; secret?: string }> {
  return (await call("POST", notifications(), body)) as { subscription: SubscriptionJson; secret?: string };
}

/** A receiver answering 200, or 503 to the requests `unavailable` picks (by their index). */
function endpoint(unavailable: (index: number) => boolean = () => false) {
  return receiver((_, response, index) => sendJson(response, unavailable(index) ? 503 : 200, { ok: true }));
}

/**
 * An execution of the workflow is logged and its notifications fan out to their end, as after any
 * execution: the fan-out started here on `queue`, without the execution itself. Answers its log id.
 */
async function executionEnds(
  workflowId: string,
  level: Level = "info",
  queue: string = taskQueue,
): Promise<string> {
  const record = execution(alice, workflowId, { startedAt: Date.now(), level });
  await flowlog.store.logs.insertExecution(record);
  await temporal.workflow.execute("fanOutNotifications", {
    workflowId: fanOutWorkflowId(record.entry.id),
    taskQueue: queue,
    args: [{ logId: record.entry.id }],
  });
  return record.entry.id;
}

/** A workflow's Temporal history as text, its payloads decoded: where a value would show if it were there. */
async function historyText(workflowId: string): Promise<string> {
  const history = await temporal.workflow.getHandle(workflowId).fetchHistory();
  return JSON.stringify(history, (_, value) =>
    value instanceof Uint8Array ? Buffer.from(value).toString("utf8") : value,
  );
}

/** Sends a sample event through the subscription's channel now (D18), its one attempt answered; its delivery id. */
async function testSend(subscriptionId: string): Promise<string> {
  const answer = await call("POST", `${notifications()}/${subscriptionId}:test`, {});
  expect(answer.attempt).toMatchObject({ outcome: "succeeded" });
  return String(answer.deliveryId);
}

/** What Standard Webhooks' npm package says of a request: "ok", or its refusal's name. */
function npmVerdict(secret: string, request: ReceivedRequest): string {
  try {
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    return "ok";
  } catch (error) {
    return (error as Error).name;
  }
}

/** What Standard Webhooks' PyPI package says of each (secret, request), in order. */
async function pythonVerdicts(cases: Array<[string, ReceivedRequest]>): Promise<string[]> {
  const input = cases
    .map(([secret, request]) => JSON.stringify({ secret, body: request.body, headers: request.headers }))
    .join("\n");
  return (await runPython(ensureStandardWebhooks(), [verifierScript], `${input}\n`)).split("\n");
}

const verifierScript = fileURLToPath(new URL("./webhook-verifiers/verify_standard.py", import.meta.url));

/** A secret nobody configured, in the standard form. */
const strangerSecret = `whsec_${randomBytes(32).toString("base64")}`;

describe("Event types (D38)", () => {
  it("each subscription gets only the types it lists: completions, alerts on executions and resolutions", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId, "Event types");
    const selection = { channel: "webhook", workflowIds: [workflowId] };
    const rule = { rule: "consecutive_failures", threshold: 1 };
    const targets = {
      everything: await endpoint(),
      resolutionsOnly: await endpoint(),
      completionsOnly: await endpoint(),
      operationalOnly: await endpoint(),
    };
    const everything = await subscribe({ ...selection, webhook: { url: targets.everything.origin } });
    expect(everything.subscription.eventTypes).toEqual([
      "workflow.execution.completed",
      "workflow.alert.fired",
      "workflow.alert.resolved",
    ]);
    const resolutionsOnly = await subscribe({
      ...selection,
      webhook: { url: targets.resolutionsOnly.origin },
      alertRule: rule,
      eventTypes: ["workflow.alert.resolved"],
    });
    await subscribe({
      ...selection,
      webhook: { url: targets.completionsOnly.origin },
      alertRule: rule,
      eventTypes: ["workflow.execution.completed"],
    });
    await subscribe({
      ...selection,
      webhook: { url: targets.operationalOnly.origin },
      eventTypes: ["subscription.held", "delivery.failed"],
    });

    // A failed execution trips the rule: its completion event carries the alert (D21).
    const failed = await executionEnds(workflowId, "error");
    const succeeded = await executionEnds(workflowId, "info");
    const typesAt = (target: { received: ReceivedRequest[] }) =>
      target.received.map((request) => request.headers["service-event"]);

    expect(typesAt(targets.everything)).toEqual([
      "workflow.execution.completed",
      "workflow.execution.completed",
    ]);
    expect(typesAt(targets.completionsOnly)).toEqual(["workflow.execution.completed"]);
    expect(JSON.parse(targets.completionsOnly.received[0]?.body ?? "{}").data.alert.rule).toBe(
      "consecutive_failures",
    );
    expect(typesAt(targets.resolutionsOnly)).toEqual(["workflow.alert.resolved"]);
    expect(typesAt(targets.operationalOnly)).toEqual([]);
    // The rule's state moved with the firing it did not send: the resolution names it.
    const read = await call("GET", `${notifications()}/${resolutionsOnly.subscription.id}`);
    expect((read.subscription as { alertStates: Json[] }).alertStates).toMatchObject([
      { workflowId, status: "resolved" },
    ]);
    expect(JSON.parse(targets.resolutionsOnly.received[0]?.body ?? "{}").data.resolution.logId).toBe(
      succeeded,
    );
    expect(failed).not.toBe(succeeded);
  });
});

describe("Custom headers (D38)", () => {
  it("every attempt, a retry included, sends them; no answer, delivery log, row or Temporal history holds a value", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId, "Headers");
    const token = `gateway-token-${randomUUID()}`;
    const key = `key-${randomUUID()}`;
    const target = await endpoint((index) => index === 0);
    const { subscription, secret } = await subscribe({
      channel: "webhook",
      webhook: {
        url: target.origin,
        generateSecret: true,
        headers: { Authorization: `Bearer ${token}`, "X-Gateway-Key": key },
      },
      workflowIds: [workflowId],
    });
    expect(subscription.webhook?.headerNames).toEqual(["authorization", "x-gateway-key"]);

    const logId = await executionEnds(workflowId);
    const [delivery] = await settledDeliveries(flowlog.store, alice.workspaceId, subscription.id);
    expect(delivery?.status).toBe("succeeded");
    expect(target.received).toHaveLength(2);
    for (const request of target.received) {
      expect(request.headers).toMatchObject({
        authorization: `Bearer ${token}`,
        "x-gateway-key": key,
        "service-delivery-id": delivery?.id,
        "idempotency-key": delivery?.id,
        "content-type": "application/json",
      });
    }

    await call("GET", `${notifications()}/${subscription.id}`);
    await call("GET", notifications());
    await call("GET", `/api/v1/deliveries/${delivery?.id}`);
    await call("GET", `/api/v1/workspaces/${alice.workspaceId}/deliveries?subscriptionId=${subscription.id}`);
    const history = await historyText(fanOutWorkflowId(logId));
    expect(history).toContain(String(delivery?.id));
    for (const value of [token, key, String(secret)]) {
      expect(await flowlog.holds(value)).toBe(false);
      expect(history).not.toContain(value);
    }
    // The generated secret is in its creation's answer only (D18); the headers' values in none.
    expect(answers.filter((answer) => answer.includes(String(secret)))).toHaveLength(1);
    expect(answers.filter((answer) => answer.includes(token) || answer.includes(key))).toEqual([]);
  });

  it("an update sets a header, removes one and keeps the other's value; a test send carries the result", async () => {
    const target = await endpoint();
    const kept = `kept-${randomUUID()}`;
    const { subscription } = await subscribe({
      channel: "webhook",
      webhook: { url: target.origin, headers: { "X-Kept": kept, "X-Dropped": "soon gone" } },
      allWorkflows: true,
    });
    const changed = await call("PATCH", `${notifications()}/${subscription.id}`, {
      webhook: { url: target.origin, headers: { "x-dropped": "", "X-Added": "new value" } },
    });
    expect((changed.subscription as SubscriptionJson).webhook?.headerNames).toEqual(["x-added", "x-kept"]);

    const deliveryId = await testSend(subscription.id);
    expect(target.received).toHaveLength(1);
    expect(target.received[0]?.headers).toMatchObject({ "x-kept": kept, "x-added": "new value" });
    expect(target.received[0]?.headers).not.toHaveProperty("x-dropped");
    expect(await historyText(testDeliveryWorkflowId(deliveryId))).not.toContain(kept);
  });
});

describe("Standard Webhooks (D39)", () => {
  it("each attempt carries webhook-id, webhook-timestamp and a signature the scheme's own verifiers accept (npm, PyPI); a retry is signed anew", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId, "Standard");
    const target = await endpoint((index) => index === 0);
    const { subscription, secret } = await subscribe({
      channel: "webhook",
      webhook: { url: target.origin, signatureScheme: "standard", generateSecret: true },
      workflowIds: [workflowId],
    });
    expect(subscription.webhook?.signatureScheme).toBe("standard");
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const sentAfter = Math.floor(Date.now() / 1000);

    await executionEnds(workflowId);
    const [delivery] = await settledDeliveries(flowlog.store, alice.workspaceId, subscription.id);
    expect(target.received).toHaveLength(2);
    for (const request of target.received) {
      expect(request.headers["webhook-id"]).toBe(delivery?.id);
      expect(request.headers["service-delivery-id"]).toBe(delivery?.id);
      expect(Number(request.headers["webhook-timestamp"])).toBeGreaterThanOrEqual(sentAfter);
      expect(Number(request.headers["webhook-timestamp"])).toBeLessThanOrEqual(Date.now() / 1000);
      expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(request.headers).not.toHaveProperty("service-signature");
      expect(npmVerdict(String(secret), request)).toBe("ok");
      expect(npmVerdict(strangerSecret, request)).toBe("WebhookVerificationError");
    }
    const [first, retry] = target.received as [ReceivedRequest, ReceivedRequest];
    expect(
      await pythonVerdicts([
        [String(secret), first],
        [String(secret), retry],
        [strangerSecret, retry],
      ]),
    ).toEqual(["ok", "ok", "WebhookVerificationError"]);
    // The same event and id, each attempt signed at its own send: the receiver's 5-minute window holds.
    expect(retry.body).toBe(first.body);
  });

  it("during a rotation each attempt carries both signatures: either secret verifies, a stranger's does not; after it, only the new one", async () => {
    const target = await endpoint();
    const { subscription, secret: before } = await subscribe({
      channel: "webhook",
      webhook: { url: target.origin, signatureScheme: "standard", generateSecret: true },
      allWorkflows: true,
    });
    const rotated = await call("POST", `${notifications()}/${subscription.id}:rotateSecret`, {});
    const after = String(rotated.secret);
    expect(after).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    await testSend(subscription.id);
    const during = target.received[0] as ReceivedRequest;
    expect(String(during.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secret of [String(before), after]) expect(npmVerdict(secret, during)).toBe("ok");
    expect(npmVerdict(strangerSecret, during)).toBe("WebhookVerificationError");

    await call("POST", `${notifications()}/${subscription.id}:rotateSecret`, {
      secret: `whsec_${randomBytes(24).toString("base64")}`,
      gracePeriodSeconds: 0,
    });
    await call("POST", `${notifications()}/${subscription.id}:rotateSecret`, {
      secret: after,
      gracePeriodSeconds: 0,
    });
    await testSend(subscription.id);
    const later = target.received[1] as ReceivedRequest;
    expect(String(later.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(npmVerdict(after, later)).toBe("ok");
    expect(npmVerdict(String(before), later)).toBe("WebhookVerificationError");
    expect(
      await pythonVerdicts([
        [String(before), during],
        [after, during],
        [strangerSecret, during],
        [after, later],
        [String(before), later],
      ]),
    ).toEqual(["ok", "ok", "WebhookVerificationError", "ok", "WebhookVerificationError"]);
  });
});

describe("Throttle (D38)", () => {
  const workerScript = fileURLToPath(new URL("./support/engine-worker-process.ts", import.meta.url));

  /** A worker process on `queue` over this file's store, logging at debug level into `output`. */
  async function workerProcess(
    queue: string,
    output: string[],
  ): Promise<{ child: ChildProcess; exited: Promise<unknown> }> {
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
        // The file's worker's delay scale: a 503's retry waits for its turn at the pace, not 5 s first.
        env: { ...process.env, ...flowlog.env, FLOWLOG_LOG_LEVEL: "debug", FLOWLOG_TEST_DELAY_SCALE: "0.02" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => output.push(chunk));
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => output.push(chunk));
    const exited = once(child, "exit");
    const polling = () => (output.join("").includes("ready") ? true : undefined);
    await until("the worker process to poll", polling, 90_000);
    return { child, exited };
  }

  it("two worker processes together send an endpoint no more than its deliveries a second, and log no secret", async () => {
    // A task queue each: every process is sure to send its share of the same endpoint's deliveries.
    const queues = [`endpoint-pace-${randomUUID()}`, `endpoint-pace-${randomUUID()}`];
    const outputs = queues.map((): string[] => []);
    const processes = await Promise.all(
      queues.map((queue, n) => workerProcess(queue, outputs[n] as string[])),
    );
    try {
      const workflowId = await createWorkflow(flowlog.store, alice.workspaceId, "Paced");
      // Every fifth request is answered 503: the retries are paced too.
      const target = await endpoint((index) => index % 5 === 4);
      const token = `paced-token-${randomUUID()}`;
      const throttle = 1;
      const { subscription, secret } = await subscribe({
        channel: "webhook",
        webhook: {
          url: target.origin,
          signatureScheme: "standard",
          generateSecret: true,
          headers: { authorization: `Bearer ${token}` },
        },
        workflowIds: [workflowId],
        throttlePerSecond: throttle,
      });
      expect(subscription.throttlePerSecond).toBe(throttle);

      const events = 8;
      await Promise.all(
        Array.from({ length: events }, (_, n) => executionEnds(workflowId, "info", queues[n % 2])),
      );
      const delivered = await settledDeliveries(flowlog.store, alice.workspaceId, subscription.id, events);
      expect(delivered.map((delivery) => delivery.status)).toEqual(Array(events).fill("succeeded"));

      // The pace gives each request its own second, and the worker signs it as it sends it (its
      // service-timestamp). What a busy machine adds between a request's turn and its signing can bring two
      // closer, but never more than W of them plus one into any W seconds: that would take a whole
      // second's delay. The eight were made at once: unpaced, they would all go together.
      const sentAt = target.received.map((request) => Number(request.headers["service-timestamp"]));
      expect(sentAt.length).toBeGreaterThan(events);
      const mostWithin = (windowMs: number) =>
        Math.max(
          ...sentAt.map((start) => sentAt.filter((at) => at >= start && at < start + windowMs).length),
        );
      expect(mostWithin(1000)).toBeLessThanOrEqual(throttle + 1);
      expect(mostWithin(4000)).toBeLessThanOrEqual(4 * throttle + 1);
      const logs = outputs.flat().join("");
      expect(logs).not.toContain(token);
      expect(logs).not.toContain(String(secret));
    } finally {
      for (const { child } of processes) child.kill("SIGTERM");
      await Promise.all(processes.map(({ exited }) => exited));
    }
  }, 120_000);
});
