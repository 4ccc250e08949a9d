import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Client, Connection } from "@temporalio/client";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { verifyWebhook } from "../src/notifications/verify-webhook.js";
import { databaseFile } from "../src/store/database.js";
import { fanOutWorkflowId } from "../src/temporal/delivery-ids.js";
import { restWithKey } from "./support/api-server.js";
import {
  notifyingDeps,
  type RunningWorker,
  runToEnd,
  settledDeliveries,
  startWorker,
} from "./support/engine.js";
import {
  createAccount,
  createWorkflow,
  offlineWorkflowState,
  startFlowlog,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { isoMs } from "./support/formats.js";
import { type ReceivedRequest, receiversClosedAfterAll, sendJson } from "./support/http-receiver.js";
import { runPython } from "./support/python.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `secret-rotation-${randomUUID()}`;
const hourMs = 3_600_000;

/**
 * The one clock of the API and the worker: real time moved on by `offsetMs`, so a 24-hour grace period
 * (D33) can end between two attempts of one delivery without a test waiting a day.
 */
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;

let flowlog: TestFlowlog;
let worker: RunningWorker;
let connection: Connection;
let temporal: Client;
let alice: TestAccount;
let bob: TestAccount;
const receiver = receiversClosedAfterAll();

beforeAll(async () => {
  flowlog = await startFlowlog({ taskQueue, clock });
  worker = await startWorker(
    temporalServer,
    // D19's first retry after 5 s becomes 0.5 s: the dev server still sees two separate attempts.
    notifyingDeps(flowlog.store, { delivery: { delayScale: 0.1 } }, { clock }),
    taskQueue,
  );
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
  alice = await createAccount(flowlog.store);
  bob = await createAccount(flowlog.store);
});

afterAll(async () => {
  await worker?.stop();
  await connection?.close();
  await flowlog?.close();
});

type Json = Record<string, unknown>;
interface RotateAnswer {
  subscription: Json & { id: string; webhook?: Json };
  secret?: string;
}

/**
 * What a webhook's answer shows besides its URL and secret when it sets no headers, signs the spec's way
 * and sends no trace context (D38, D39, D50).
 */
const serviceScheme = { headerNames: [], signatureScheme: "service", propagateTraceContext: false };

const base = (workspaceId = alice.workspaceId) => `/api/v1/workspaces/${workspaceId}/notifications`;
const call = (method: string, path: string, body?: unknown, key = alice.key) =>
  restWithKey(flowlog.server.url, key, method, path, body);
const rotatePath = (id: string, workspaceId = alice.workspaceId) => `${base(workspaceId)}/${id}:rotateSecret`;

async function rotate(id: string, body: Json = {}): Promise<{ answer: RotateAnswer; text: string }> {
  const response = await call("POST", rotatePath(id), body);
  expect(response.status, response.text).toBe(200);
  return { answer: response.json as RotateAnswer, text: response.text };
}

const oldSecret = `whsec_old_${"o".repeat(24)}`;
const newSecret = `whsec_new_${"n".repeat(24)}`;

/** A signed webhook made straight in the store, as a client would have created it before rotating. */
const signedWebhook = (url = "https://receiver.example.test/hooks", secret: string | null = oldSecret) =>
  subscribeWebhook(flowlog.store, alice.workspaceId, url, secret === null ? {} : { secret });

describe("D33 RotateSecret over REST", () => {
  it("a given secret replaces the current one, which keeps signing for the grace period; neither is ever shown", async () => {
    const id = await signedWebhook();
    const before = clock();
    const { answer, text } = await rotate(id, { secret: newSecret, gracePeriodSeconds: 3600 });
    expect(answer.secret).toBeUndefined();
    expect(answer.subscription.webhook).toEqual({
      url: "https://receiver.example.test/hooks",
      hasSecret: true,
      previousSecretExpiresAt: expect.stringMatching(isoMs),
      ...serviceScheme,
    });
    const expiresAt = Date.parse(String(answer.subscription.webhook?.previousSecretExpiresAt));
    expect(expiresAt).toBeGreaterThanOrEqual(before + hourMs);
    expect(expiresAt).toBeLessThanOrEqual(clock() + hourMs);
    const reads = [text, (await call("GET", `${base()}/${id}`)).text, (await call("GET", base())).text];
    for (const read of reads) {
      expect(read).not.toContain(oldSecret);
      expect(read).not.toContain(newSecret);
    }
    expect(await flowlog.store.notifications.getForDelivery(id)).toMatchObject({
      secret: newSecret,
      previousSecret: oldSecret,
      previousSecretExpiresAt: expiresAt,
    });
  });

  it("left out, a whsec_ secret is generated and shown in this answer only, and the old one signs for 24 h", async () => {
    const id = await signedWebhook();
    const before = clock();
    const { answer } = await rotate(id);
    expect(answer.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const expiresAt = Date.parse(String(answer.subscription.webhook?.previousSecretExpiresAt));
    expect(expiresAt).toBeGreaterThanOrEqual(before + 24 * hourMs);
    expect(expiresAt).toBeLessThanOrEqual(clock() + 24 * hourMs);
    const read = await call("GET", `${base()}/${id}`);
    expect(read.text).not.toContain(String(answer.secret));
    expect((await flowlog.store.notifications.getForDelivery(id))?.secret).toBe(answer.secret);
  });

  it("a grace period of 0 drops the old secret at once", async () => {
    const id = await signedWebhook();
    const { answer } = await rotate(id, { secret: newSecret, gracePeriodSeconds: 0 });
    expect(answer.subscription.webhook).toEqual({
      url: "https://receiver.example.test/hooks",
      hasSecret: true,
      ...serviceScheme,
    });
    expect(await flowlog.store.notifications.getForDelivery(id)).toMatchObject({
      secret: newSecret,
      previousSecret: null,
      previousSecretExpiresAt: null,
    });
  });

  it("an unsigned webhook simply gets its first secret, with no old one to keep", async () => {
    const id = await signedWebhook("https://receiver.example.test/hooks", null);
    const { answer } = await rotate(id, { secret: newSecret });
    expect(answer.subscription.webhook).toEqual({
      url: "https://receiver.example.test/hooks",
      hasSecret: true,
      ...serviceScheme,
    });
    expect((await flowlog.store.notifications.getForDelivery(id))?.previousSecret).toBeNull();
  });

  it("the old secret is kept encrypted: the SQLite file never holds either secret in plaintext", async () => {
    const given = `plain-check-old-${randomUUID()}`;
    const rotated = `plain-check-new-${randomUUID()}`;
    const id = await signedWebhook("https://receiver.example.test/hooks", given);
    await rotate(id, { secret: rotated });
    const file = databaseFile(flowlog.dataDir);
    const bytes = Buffer.concat(
      [file, `${file}-wal`].map((f) => {
        try {
          return readFileSync(f);
        } catch {
          return Buffer.alloc(0);
        }
      }),
    );
    expect(bytes.includes(given)).toBe(false);
    expect(bytes.includes(rotated)).toBe(false);
    expect((await flowlog.store.notifications.getForDelivery(id))?.previousSecret).toBe(given);
  });

  it("an update that sets or removes the secret ends a grace period at once (it has none of its own)", async () => {
    const id = await signedWebhook();
    await rotate(id, { secret: newSecret });
    const url = "https://receiver.example.test/hooks";
    const updated = await call("PATCH", `${base()}/${id}`, { webhook: { url, secret: `${newSecret}-2` } });
    expect(updated.status, updated.text).toBe(200);
    expect((updated.json as RotateAnswer).subscription.webhook).toEqual({
      url,
      hasSecret: true,
      ...serviceScheme,
    });
    expect((await flowlog.store.notifications.getForDelivery(id))?.previousSecret).toBeNull();
  });

  it("bad input is 400 invalid_argument naming the field", async () => {
    const id = await signedWebhook();
    const cases: Array<[Json, string]> = [
      [{ secret: "too-short" }, "secret"],
      [{ secret: "x".repeat(257) }, "secret"],
      [{ gracePeriodSeconds: 604_801 }, "gracePeriodSeconds"],
    ];
    for (const [body, field] of cases) {
      const response = await call("POST", rotatePath(id), body);
      expect(response.status, response.text).toBe(400);
      const problem = response.json as { code: string; errors: { field: string }[] };
      expect(problem.code).toBe("invalid_argument");
      expect(problem.errors.map((e) => e.field)).toEqual([field]);
    }
    expect((await flowlog.store.notifications.getForDelivery(id))?.secret).toBe(oldSecret);
  });

  it("7 days is the longest grace period", async () => {
    const id = await signedWebhook();
    const { answer } = await rotate(id, { secret: newSecret, gracePeriodSeconds: 604_800 });
    expect(answer.subscription.webhook?.previousSecretExpiresAt).toMatch(isoMs);
  });

  it("an e-mail or chat subscription has no secret to rotate: 400 failed_precondition", async () => {
    const created = await call("POST", base(), {
      channel: "email",
      email: { recipients: ["ops@example.test"] },
      allWorkflows: true,
    });
    const id = (created.json as RotateAnswer).subscription.id;
    const response = await call("POST", rotatePath(id), { secret: newSecret });
    expect(response.status, response.text).toBe(400);
    expect(response.json).toMatchObject({ code: "failed_precondition" });
    expect((response.json as { detail: string }).detail).toContain("only a webhook");
  });

  it("another workspace's subscription is 403 for a non-member and 404 under the caller's own workspace", async () => {
    const theirs = await subscribeWebhook(flowlog.store, bob.workspaceId, "https://bob.example.test/", {
      secret: oldSecret,
    });
    expect((await call("POST", rotatePath(theirs, bob.workspaceId), {})).status).toBe(403);
    expect((await call("POST", rotatePath(theirs), {})).status).toBe(404);
    expect((await flowlog.store.notifications.getForDelivery(theirs))?.secret).toBe(oldSecret);
  });
});

describe("D33 an expired replaced secret leaves storage", () => {
  const previousHeld = async (id: string) =>
    (
      await flowlog.sql<{ held: number }>(
        `SELECT CASE WHEN previous_secret_sealed IS NULL THEN 0 ELSE 1 END AS held
         FROM notification_subscriptions WHERE id = @id`,
        { id },
      )
    )[0]?.held;

  it("the delivery that finds the grace period over clears the old secret from its row and signs with the new one only", async () => {
    // Real time: the worker reads the store on it. This describe runs before any test moves the clock on.
    expect(offsetMs).toBe(0);
    const hook = await receiver((_, response) => sendJson(response, 200, { ok: true }));
    const workflowId = await saveWorkflow();
    const id = await signedWebhook(hook.origin);
    const { answer } = await rotate(id, { secret: newSecret, gracePeriodSeconds: 1 });
    const expiresAt = Date.parse(String(answer.subscription.webhook?.previousSecretExpiresAt));
    await sleep(Math.max(0, expiresAt - Date.now()) + 50);
    // Nothing has read the row since: the expired secret is still sealed in it.
    expect(await previousHeld(id)).toBe(1);

    await execute(workflowId);
    await settled(id, 1);
    const request = hook.received[0] as ReceivedRequest;
    expect(v1Count(request)).toBe(1);
    expect(stripeAccepts(request, newSecret)).toBe(true);
    expect(stripeAccepts(request, oldSecret)).toBe(false);
    expect(await previousHeld(id)).toBe(0);
    expect(await flowlog.store.notifications.getForDelivery(id)).toMatchObject({
      secret: newSecret,
      previousSecret: null,
      previousSecretExpiresAt: null,
    });
  });
});

/**
 * stripe-node as an independent verifier. Its verifyHeader reads a header of the same shape as ours
 * (`t=...,v1=...,v1=...`, any v1 may match) and computes the HMAC over `${t}.${payload}` with t exactly as
 * written, so our millisecond t signs the same bytes (parseInt keeps all 13 digits). Only its replay check
 * counts in seconds: age = floor(receivedAt / 1000) - t. Handing it receivedAt in microseconds (our ms times
 * 1000) makes floor(receivedAt / 1000) our milliseconds, so the check compares like with like and the
 * tolerance is read in ms: 300_000 is D19's 5-minute window. (A seconds receivedAt would make every age
 * negative and the check vacuous; the last test shows this one rejects an old header.)
 */
function stripeAccepts(request: ReceivedRequest, secret: string, receivedAtMs = Date.now()): boolean {
  const { signature } = Stripe.webhooks;
  if (!signature) throw new Error("this stripe-node has no webhooks.signature");
  try {
    return signature.verifyHeader(
      request.body,
      String(request.headers["service-signature"]),
      secret,
      300_000,
      undefined,
      receivedAtMs * 1000,
    );
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) return false;
    throw error;
  }
}

/** Every string in a workflow history, payload bytes decoded as UTF-8, so a search can find what it holds. */
function readable(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("utf8");
  if (Array.isArray(value)) return value.map(readable).join("\n");
  if (value !== null && typeof value === "object") return Object.values(value).map(readable).join("\n");
  return String(value);
}

/** docs/notifications.md's Python verifier, exactly as printed there, run by python3 on a received request. */
async function readmePythonAccepts(request: ReceivedRequest, secret: string): Promise<boolean> {
  const readme = readFileSync(new URL("../docs/notifications.md", import.meta.url), "utf8");
  const snippet = /```python\n(import hashlib[\s\S]*?def verify[\s\S]*?)```/.exec(readme)?.[1];
  if (!snippet) throw new Error("docs/notifications.md has no Python verify snippet");
  const driver = [
    "import json, sys",
    "given = json.load(sys.stdin)",
    "print(verify(given['secret'], given['body'].encode(), given['headers']))",
  ].join("\n");
  const input = JSON.stringify({ secret, body: request.body, headers: request.headers });
  return (await runPython("python3", ["-c", `${snippet}\n${driver}`], input)) === "True";
}

const v1Count = (request: ReceivedRequest) =>
  String(request.headers["service-signature"])
    .split(",")
    .filter((part) => part.startsWith("v1=")).length;

/** A workflow that runs without any network: starter, then a response block. */
async function saveWorkflow(): Promise<string> {
  return await createWorkflow(flowlog.store, alice.workspaceId, "Rotation test", null, offlineWorkflowState);
}

const execute = (workflowId: string) => runToEnd(temporal, alice, workflowId, { taskQueue });

const settled = (subscriptionId: string, count: number) =>
  settledDeliveries(flowlog.store, alice.workspaceId, subscriptionId, count);

describe("D33 deliveries during and after the grace period, verified by stripe-node", () => {
  it("during the grace period one header carries both signatures: a receiver holding either secret verifies; after it, only the new one", async () => {
    const hook = await receiver((_, response) => sendJson(response, 200, { ok: true }));
    const workflowId = await saveWorkflow();
    const id = await signedWebhook(hook.origin);
    await rotate(id, { secret: newSecret });

    const { logId } = await execute(workflowId);
    await settled(id, 1);
    const during = hook.received[0] as ReceivedRequest;
    // D24: the secrets are read by the delivery activity itself; the workflow's history never holds them.
    const history = readable(await temporal.workflow.getHandle(fanOutWorkflowId(logId)).fetchHistory());
    expect(history).toContain(id);
    expect(history).not.toContain(oldSecret);
    expect(history).not.toContain(newSecret);
    expect(during.headers["service-signature"]).toMatch(/^t=\d{13},v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(stripeAccepts(during, newSecret)).toBe(true);
    expect(stripeAccepts(during, oldSecret)).toBe(true);
    expect(stripeAccepts(during, "whsec_someone_else_entirely")).toBe(false);
    for (const secret of [newSecret, oldSecret]) {
      expect(verifyWebhook({ secret, body: during.body, headers: during.headers })).toBe(true);
      expect(await readmePythonAccepts(during, secret)).toBe(true);
    }
    expect(await readmePythonAccepts(during, "whsec_someone_else_entirely")).toBe(false);
    // Newest first: the new secret's v1, then the old one's.
    const [t, ...v1s] = String(during.headers["service-signature"]).split(",");
    const hmacOf = (secret: string) =>
      createHmac("sha256", secret)
        .update(`${t?.slice(2)}.${during.body}`)
        .digest("hex");
    expect(v1s).toEqual([`v1=${hmacOf(newSecret)}`, `v1=${hmacOf(oldSecret)}`]);

    offsetMs += 25 * hourMs;
    await execute(workflowId);
    await settled(id, 2);
    const after = hook.received[1] as ReceivedRequest;
    expect(v1Count(after)).toBe(1);
    expect(stripeAccepts(after, newSecret)).toBe(true);
    expect(stripeAccepts(after, oldSecret)).toBe(false);
    expect(verifyWebhook({ secret: oldSecret, body: after.body, headers: after.headers })).toBe(false);
    expect(await readmePythonAccepts(after, newSecret)).toBe(true);
    expect(await readmePythonAccepts(after, oldSecret)).toBe(false);
    const read = await call("GET", `${base()}/${id}`);
    expect((read.json as RotateAnswer).subscription.webhook).not.toHaveProperty("previousSecretExpiresAt");
  });

  it("the expiry is judged at each attempt: a retry after it is signed with the new secret only", async () => {
    const hook = await receiver((_, response, index) => {
      if (index > 0) return sendJson(response, 200, { ok: true });
      // The grace period ends between the first attempt and its retry.
      offsetMs += 25 * hourMs;
      return sendJson(response, 503, { busy: true });
    });
    const workflowId = await saveWorkflow();
    const id = await signedWebhook(hook.origin);
    await rotate(id, { secret: newSecret });

    await execute(workflowId);
    const [delivery] = await settled(id, 1);
    expect(delivery?.status).toBe("succeeded");
    const [first, retry] = hook.received as [ReceivedRequest, ReceivedRequest];
    expect(retry.headers["service-delivery-id"]).toBe(first.headers["service-delivery-id"]);
    expect(v1Count(first)).toBe(2);
    expect(stripeAccepts(first, oldSecret)).toBe(true);
    expect(v1Count(retry)).toBe(1);
    expect(stripeAccepts(retry, newSecret)).toBe(true);
    expect(stripeAccepts(retry, oldSecret)).toBe(false);
  });

  it("stripe-node's replay check, fed milliseconds, rejects a header signed more than 5 minutes before it arrived", async () => {
    const hook = await receiver((_, response) => sendJson(response, 200, { ok: true }));
    const id = await signedWebhook(hook.origin);
    await rotate(id, { secret: newSecret });
    await execute(await saveWorkflow());
    await settled(id, 1);
    const request = hook.received[0] as ReceivedRequest;
    const signedAt = Number(request.headers["service-timestamp"]);
    expect(stripeAccepts(request, newSecret, signedAt + 299_000)).toBe(true);
    expect(stripeAccepts(request, newSecret, signedAt + 301_000)).toBe(false);
  });
});
