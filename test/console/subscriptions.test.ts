import { createHmac, randomUUID } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WorkflowsService } from "../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { newId } from "../../src/util/ids.js";
import { clientWithKey, restWithKey } from "../support/api-server.js";
import { launchBrowser, openSignedIn, screenshot } from "../support/browser.js";
import { notifyingDeps, type RunningWorker, startWorker } from "../support/engine.js";
import {
  createAccount,
  createWorkflow,
  offlineWorkflowState,
  recordFailedDelivery,
  startFlowlog,
  type TestAccount,
  type TestFlowlog,
} from "../support/flowlog.js";
import {
  type HttpReceiver,
  type ReceivedRequest,
  receiversClosedAfterAll,
  sendJson,
} from "../support/http-receiver.js";
import { untilApi } from "../support/until.js";

/**
 * Issue 17, subscriptions: the console's subscription pages drive the public API (D18-D21, D33-D35). A
 * real API server, a real worker on the run's Temporal dev server, and real HTTP receivers on loopback;
 * what the page did is read back through the API, and what it sent through the receivers.
 */
const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `console-subscriptions-${randomUUID()}`;
const receiver = receiversClosedAfterAll();
/** D35's figures shrunk to seconds: two failed deliveries over 10 s disable an endpoint. */
const autoDisable = { failingForMs: 10_000, noticeMs: 5_000, minFailures: 2 };

let flowlog: TestFlowlog;
let worker: RunningWorker;
let account: TestAccount;
let browser: Browser;
let workflowId: string;

beforeAll(async () => {
  flowlog = await startFlowlog({ taskQueue });
  worker = await startWorker(temporalServer, notifyingDeps(flowlog.store, { autoDisable }), taskQueue);
  account = await createAccount(flowlog.store);
  workflowId = await createWorkflow(
    flowlog.store,
    account.workspaceId,
    "Nightly export",
    null,
    offlineWorkflowState,
  );
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await flowlog?.close();
});

type Json = Record<string, unknown>;
interface SubscriptionJson extends Json {
  id: string;
  active: boolean;
  failingSince?: string;
  failedDeliveries?: number;
  disabledReason?: string;
  webhook?: { url: string; hasSecret: boolean; headerNames: string[]; signatureScheme: string };
  eventTypes: string[];
  throttlePerSecond?: number;
  alertStates: { workflowId: string; rule: string; status: string; reason: string; lastFiredAt: string }[];
}

const base = () => `/api/v1/workspaces/${account.workspaceId}/notifications`;
const call = (method: string, path: string, body?: unknown) =>
  restWithKey(flowlog.server.url, account.key, method, path, body);

async function listed(): Promise<SubscriptionJson[]> {
  return ((await call("GET", base())).json as { subscriptions: SubscriptionJson[] }).subscriptions;
}

async function read(id: string): Promise<SubscriptionJson> {
  return ((await call("GET", `${base()}/${id}`)).json as { subscription: SubscriptionJson }).subscription;
}

async function createOverApi(body: Json): Promise<{ subscription: SubscriptionJson; secret?: string }> {
  const response = await call("POST", base(), body);
  expect(response.status, response.text).toBe(200);
  return response.json as { subscription: SubscriptionJson; secret?: string };
}

const acknowledging = () => receiver((_, response) => sendJson(response, 200, { received: true }));

async function openPage(path: string) {
  const opened = await openSignedIn(browser, flowlog.server.url, account);
  await opened.page.goto(`${flowlog.server.url}/#/${path}?ws=${account.workspaceId}`);
  return opened;
}

/** The `v1` signatures of a delivery, and whether `secret` made one of them over `<t>.<body>` (D19, D33). */
function signatures(request: ReceivedRequest | undefined): string[] {
  const header = String(request?.headers["service-signature"] ?? "");
  return header
    .split(",")
    .filter((part) => part.startsWith("v1="))
    .map((part) => part.slice(3));
}

function signatureWith(secret: string, request: ReceivedRequest | undefined): string {
  const t = String(request?.headers["service-timestamp"]);
  return createHmac("sha256", secret).update(`${t}.${request?.body}`).digest("hex");
}

async function sendTest(page: Page, hook: HttpReceiver): Promise<ReceivedRequest | undefined> {
  const before = hook.received.length;
  await page.getByRole("button", { name: "Send test event" }).click();
  await page.getByRole("heading", { name: "Test event" }).waitFor();
  await expect.poll(() => hook.received.length).toBe(before + 1);
  return hook.received.at(-1);
}

describe("creating a subscription", () => {
  it("creates a webhook with every chosen setting, and shows its generated secret once: the one that signs", async () => {
    const hook = await acknowledging();
    const { page, problems } = await openPage("subscriptions");
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    await page.getByRole("link", { name: "New subscription" }).click();
    await page.getByRole("radio", { name: "Webhook" }).check();
    await page.getByLabel("Webhook URL").fill(`${hook.origin}/hooks`);
    await page.getByRole("radio", { name: "Generate a secret (shown once)" }).check();
    await page.getByRole("checkbox", { name: "All workflows, including ones created later" }).uncheck();
    await page.getByRole("checkbox", { name: "Nightly export", exact: true }).check();
    await page.getByRole("checkbox", { name: "error", exact: true }).check();
    await page.getByRole("checkbox", { name: "api", exact: true }).check();
    await page.getByRole("checkbox", { name: "schedule", exact: true }).check();
    await page.getByRole("checkbox", { name: "Final output", exact: true }).check();
    await page.getByLabel("Rule").selectOption("failure_rate");
    await page.getByLabel("X (percent)").fill("25");
    await page.getByLabel("Y (hours)").fill("24");
    await page.getByRole("button", { name: "Create subscription" }).click();

    const secretField = page.getByRole("textbox", { name: "Signing secret" });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_/);
    await expect.poll(() => page.getByText("it will not be shown again").count()).toBe(1);

    const [created] = (await listed()).filter((s) => s.webhook?.url === `${hook.origin}/hooks`);
    expect(created).toMatchObject({
      channel: "webhook",
      webhook: { url: `${hook.origin}/hooks`, hasSecret: true },
      allWorkflows: false,
      workflowIds: [workflowId],
      levelFilter: ["error"],
      triggerFilter: ["api", "schedule"],
      includeFinalOutput: true,
      includeTraceSpans: false,
      includeRateLimits: false,
      includeUsageData: false,
      alertRule: { rule: "failure_rate", threshold: 25, windowHours: 24 },
      active: true,
    });
    expect(new URL(page.url()).hash).toBe(`#/subscriptions/${created?.id}?ws=${account.workspaceId}`);

    await page.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.evaluate("navigator.clipboard.readText()")).toBe(secret);

    // The secret shown is the one that signs: a test event through the real channel carries its signature.
    const sent = await sendTest(page, hook);
    expect(signatures(sent)).toEqual([signatureWith(secret, sent)]);
    await expect.poll(() => page.getByRole("status").allTextContents()).toContain("Test event sent.");
    await expect.poll(() => page.locator("section.panel").textContent()).toMatch(/succeeded.*200/);
    await screenshot(page, "subscription");

    // Shown once: nothing of it in the browser's storage or URL, and gone after a reload.
    const stored = await page.evaluate("JSON.stringify({ ...sessionStorage, ...localStorage })");
    expect(stored).not.toContain(secret);
    expect(page.url()).not.toContain(secret);
    await page.reload();
    await page.getByRole("heading", { name: /Webhook subscription/ }).waitFor();
    await expect.poll(() => page.locator("dl.facts").textContent()).toContain("Signed with a secret");
    expect(await page.getByRole("textbox", { name: "Signing secret" }).count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    expect(problems).toEqual([]);
  });

  it("creates e-mail and chat subscriptions, and says what the API refuses, naming the field", async () => {
    const { page, problems } = await openPage("subscriptions/new");
    await page.getByLabel("Webhook URL").fill("ftp://files.example.test/in");
    await page.getByRole("button", { name: "Create subscription" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("webhook.url");
    // A full-page screenshot resizes the viewport for a moment: the next click starts from a fresh page.
    await screenshot(page, "subscription-form");
    await page.reload();

    await page.getByRole("radio", { name: "E-mail" }).check();
    await page.getByRole("button", { name: "Create subscription" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("email.recipients");
    await page
      .getByLabel("Recipients (one address per line, up to 10)")
      .fill("ops@example.test\ndev@example.test");
    await page.getByRole("button", { name: "Create subscription" }).click();
    await page.getByRole("heading", { name: /E-mail subscription/ }).waitFor();
    expect(await page.getByRole("textbox", { name: "Signing secret" }).count()).toBe(0);

    await page.goto(`${flowlog.server.url}/#/subscriptions/new?ws=${account.workspaceId}`);
    await page.getByRole("radio", { name: "Chat (Slack-compatible)" }).check();
    await page.getByLabel("Incoming-webhook URL").fill("https://chat.example.test/hooks/T0/B0");
    await page.getByLabel("Rule").selectOption("no_activity");
    await page.getByLabel("X (hours)").fill("");
    await page.getByRole("button", { name: "Create subscription" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("alertRule.threshold");
    await page.getByLabel("X (hours)").fill("12");
    await page.getByRole("button", { name: "Create subscription" }).click();
    await page.getByRole("heading", { name: /Chat \(Slack-compatible\) subscription/ }).waitFor();

    const subscriptions = await listed();
    expect(subscriptions).toContainEqual(
      expect.objectContaining({
        channel: "email",
        email: { recipients: ["ops@example.test", "dev@example.test"] },
        allWorkflows: true,
      }),
    );
    expect(subscriptions).toContainEqual(
      expect.objectContaining({
        channel: "slack",
        slack: { url: "https://chat.example.test/hooks/T0/B0" },
        alertRule: { rule: "no_activity", threshold: 12 },
      }),
    );
    // The refusals are the browser's own 400 log lines; nothing else may go wrong.
    expect(problems.filter((problem) => !problem.includes("400"))).toEqual([]);
  });
});

describe("changing a subscription", () => {
  it("edits every setting through UpdateSubscription, keeping the secret, and disables and enables it", async () => {
    const hook = await acknowledging();
    const { subscription } = await createOverApi({
      channel: "webhook",
      webhook: { url: `${hook.origin}/old`, generateSecret: true },
      workflowIds: [workflowId],
      levelFilter: ["error"],
      triggerFilter: ["api"],
      includeFinalOutput: true,
      alertRule: { rule: "consecutive_failures", threshold: 3 },
    });
    const { page, problems } = await openPage(`subscriptions/${subscription.id}`);
    await page.getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Webhook URL").fill(`${hook.origin}/new`);
    await page.getByRole("checkbox", { name: "All workflows, including ones created later" }).check();
    await page.getByRole("checkbox", { name: "error", exact: true }).uncheck();
    await page.getByRole("checkbox", { name: "manual", exact: true }).check();
    await page.getByRole("checkbox", { name: "Final output", exact: true }).uncheck();
    await page.getByRole("checkbox", { name: "Usage data", exact: true }).check();
    await page.getByLabel("Rule").selectOption({ label: "None: notify on every matching execution" });
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => page.getByRole("status").allTextContents()).toContain("Saved.");

    const edited = await read(subscription.id);
    expect(edited).toMatchObject({
      webhook: { url: `${hook.origin}/new`, hasSecret: true },
      allWorkflows: true,
      workflowIds: [],
      levelFilter: [],
      triggerFilter: ["api", "manual"],
      includeFinalOutput: false,
      includeUsageData: true,
      active: true,
    });
    expect(edited).not.toHaveProperty("alertRule");
    await expect.poll(() => page.locator("dl.facts").textContent()).toContain("every level");

    await page.getByRole("button", { name: "Disable" }).click();
    await page.getByRole("button", { name: "Enable" }).waitFor();
    expect((await read(subscription.id)).active).toBe(false);
    await expect.poll(() => page.locator("dl.facts dd").first().textContent()).toBe("Disabled");
    await page.getByRole("button", { name: "Enable" }).click();
    await page.getByRole("button", { name: "Disable" }).waitFor();
    expect((await read(subscription.id)).active).toBe(true);
    expect(problems).toEqual([]);
  });

  it("rotates the secret: the new one is shown once and signs beside the old one for the grace period", async () => {
    const hook = await acknowledging();
    const { subscription, secret: old } = await createOverApi({
      channel: "webhook",
      webhook: { url: hook.origin, generateSecret: true },
      allWorkflows: true,
    });
    const { page, problems } = await openPage(`subscriptions/${subscription.id}`);
    await page.getByRole("button", { name: "Rotate secret…" }).click();
    await page.getByLabel(/Seconds the current secret keeps signing/).fill("3600");
    await page.getByRole("button", { name: "Rotate secret", exact: true }).click();
    const secretField = page.getByRole("textbox", { name: "Signing secret" });
    await secretField.waitFor();
    const rotated = await secretField.inputValue();
    expect(rotated).not.toBe(old);
    await expect
      .poll(() => page.locator("dl.facts").textContent())
      .toContain("previous secret also signs until");

    const sent = await sendTest(page, hook);
    expect(signatures(sent)).toEqual([signatureWith(rotated, sent), signatureWith(old ?? "", sent)]);
    await page.getByRole("button", { name: "I have saved it" }).click();
    expect(await page.getByRole("textbox", { name: "Signing secret" }).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it("deletes only once the deletion is confirmed", async () => {
    const { subscription } = await createOverApi({
      channel: "email",
      email: { recipients: ["gone@example.test"] },
      allWorkflows: true,
    });
    const { page, problems } = await openPage(`subscriptions/${subscription.id}`);
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("group", { name: "Delete this subscription?" }).waitFor();
    await page.getByRole("button", { name: "Cancel" }).click();
    expect((await listed()).map((s) => s.id)).toContain(subscription.id);

    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("button", { name: "Delete subscription" }).click();
    await page.getByRole("heading", { name: "Subscriptions", level: 1 }).waitFor();
    await expect
      .poll(() => page.getByRole("status").allTextContents())
      .toEqual([expect.stringContaining(subscription.id)]);
    expect((await listed()).map((s) => s.id)).not.toContain(subscription.id);
    expect(problems).toEqual([]);
  });
});

describe("endpoint settings (D38, D39)", () => {
  it("sets event types, write-only headers, a pace and Standard Webhooks signing; a test event carries them", async () => {
    const hook = await acknowledging();
    const token = `Bearer console-${randomUUID()}`;
    const { page, problems } = await openPage("subscriptions/new");
    await page.getByLabel("Webhook URL").fill(`${hook.origin}/standard`);
    await page.getByLabel("Signature scheme").selectOption("standard");
    await page.getByRole("radio", { name: "Generate a secret (shown once)" }).check();
    await page.getByRole("button", { name: "Add a header" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Authorization");
    await page.getByLabel("Value", { exact: true }).fill(token);
    await page.getByRole("checkbox", { name: /^subscription\.held/ }).check();
    await page.getByLabel(/^Deliveries per second at most/).fill("1001");
    await page.getByRole("button", { name: "Create subscription" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("throttlePerSecond");
    await page.getByLabel(/^Deliveries per second at most/).fill("5");
    await page.getByRole("button", { name: "Create subscription" }).click();

    const secretField = page.getByRole("textbox", { name: "Signing secret" });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const [created] = (await listed()).filter((s) => s.webhook?.url === `${hook.origin}/standard`);
    expect(created).toMatchObject({
      webhook: { hasSecret: true, headerNames: ["authorization"], signatureScheme: "standard" },
      eventTypes: [
        "workflow.execution.completed",
        "workflow.alert.fired",
        "workflow.alert.resolved",
        "subscription.held",
      ],
      throttlePerSecond: 5,
    });
    await expect
      .poll(() => page.locator("dl.facts").textContent())
      .toContain("authorization (values never shown again)");

    const sent = await sendTest(page, hook);
    expect(sent?.headers.authorization).toBe(token);
    expect(() =>
      new Webhook(secret).verify(String(sent?.body), sent?.headers as Record<string, string>),
    ).not.toThrow();

    // Write-only: after a reload, neither the page nor the edit form holds the header's value.
    await page.reload();
    await page.getByRole("button", { name: "Edit" }).click();
    expect(await page.content()).not.toContain(token);
    await page.getByRole("checkbox", { name: "Remove authorization" }).check();
    await page.getByRole("button", { name: "Add a header" }).click();
    await page.getByLabel("Name", { exact: true }).fill("X-Tenant");
    await page.getByLabel("Value", { exact: true }).fill("acme");
    await page.getByRole("checkbox", { name: /^subscription\.held/ }).uncheck();
    await page.getByLabel(/^Deliveries per second at most/).fill("");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => page.getByRole("status").allTextContents()).toContain("Saved.");
    const edited = await read(String(created?.id));
    expect(edited.webhook).toMatchObject({ headerNames: ["x-tenant"], signatureScheme: "standard" });
    expect(edited.eventTypes).toEqual([
      "workflow.execution.completed",
      "workflow.alert.fired",
      "workflow.alert.resolved",
    ]);
    expect(edited).not.toHaveProperty("throttlePerSecond");
    expect((await sendTest(page, hook))?.headers).toMatchObject({ "x-tenant": "acme" });
    expect(hook.received.at(-1)?.headers).not.toHaveProperty("authorization");
    // The refusal of 1001 is the browser's own 400 log line; nothing else may go wrong.
    expect(problems.filter((problem) => !problem.includes("400"))).toEqual([]);
  });
});

describe("failing endpoints (D35)", () => {
  it("shows since when every delivery has failed, and why flowlog disabled the subscription", async () => {
    const gone = await receiver((_, response) => sendJson(response, 410, { gone: true }));
    const { subscription } = await createOverApi({
      channel: "webhook",
      webhook: { url: gone.origin },
      workflowIds: [workflowId],
    });
    const workflows = clientWithKey(WorkflowsService, flowlog.server.url, account.key);
    await workflows.executeWorkflow({ id: workflowId });
    await workflows.executeWorkflow({ id: workflowId });
    const failing = await untilApi("two failed deliveries counted", async () => {
      const current = await read(subscription.id);
      return current.failedDeliveries === 2 ? current : undefined;
    });

    const { page, problems } = await openPage(`subscriptions/${subscription.id}`);
    const status = page.locator("dl.facts dd").first();
    await expect
      .poll(() => status.textContent())
      .toMatch(/^Active — every delivery has failed since .* \(2 failed\)$/);
    expect(failing.failingSince).toEqual(expect.any(String));

    const disabled = await untilApi(
      "flowlog's disable",
      async () => {
        const current = await read(subscription.id);
        return current.active ? undefined : current;
      },
      30_000,
    );
    await page.reload();
    await expect.poll(() => status.textContent()).toMatch(/^Disabled — flowlog disabled it at /);
    expect(await status.textContent()).toContain(`: ${disabled.disabledReason}`);
    await page.getByRole("button", { name: "Enable" }).waitFor();
    expect(problems).toEqual([]);
  });
});

describe("held endpoints (D36)", () => {
  it("shows a held subscription's state and how many deliveries wait, on the subscription and in the list", async () => {
    const hook = await acknowledging();
    const { subscription } = await createOverApi({
      channel: "webhook",
      webhook: { url: hook.origin },
      workflowIds: [workflowId],
    });
    // Three deliveries that ran out of schedule on 503s, as the delivery log records them: the hold.
    const at = Date.now();
    for (let n = 0; n < 3; n++) {
      const eventId = newId("evt");
      const delivery = await flowlog.store.deliveries.createOnce({
        id: newId("dlv"),
        eventId,
        eventType: "workflow.execution.completed",
        subscriptionId: subscription.id,
        workspaceId: account.workspaceId,
        logId: null,
        event: { id: eventId, type: "workflow.execution.completed", timestamp: at + n, data: {} },
        createdAt: at + n,
      });
      await flowlog.store.deliveries.recordAttempt(
        {
          deliveryId: delivery.id,
          series: 1,
          attempt: 5,
          startedAt: at + n,
          durationMs: 1,
          outcome: "failed",
          httpStatus: 503,
          responseSnippet: null,
          error: "receiver answered 503 Service Unavailable",
        },
        "failed",
        { exhausted: true },
      );
    }
    expect(await read(subscription.id)).toMatchObject({ state: "held", heldCount: 3 });

    const { page, problems } = await openPage(`subscriptions/${subscription.id}`);
    const status = page.locator("dl.facts dd").first();
    await expect
      .poll(() => status.textContent())
      .toMatch(/^Held — its endpoint keeps failing: 3 held since .*, sent once a probe gets through$/);
    await page.goto(`${flowlog.server.url}/#/subscriptions?ws=${account.workspaceId}`);
    await expect.poll(() => page.getByText(/^Held$/).count()).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });
});

describe("recovering failed deliveries (D37)", () => {
  it("previews a window, recovers it with progress, and cancels a job under way", async () => {
    const hook = await acknowledging();
    const { subscription } = await createOverApi({
      channel: "webhook",
      webhook: { url: hook.origin },
      allWorkflows: true,
      throttlePerSecond: 5,
    });
    const outageStart = Date.now() - 3_600_000;
    for (let i = 0; i < 30; i++)
      await recordFailedDelivery(
        flowlog.store,
        { workspaceId: account.workspaceId, subscriptionId: subscription.id },
        outageStart + i * 60_000,
      );

    const { page, problems } = await openPage(`subscriptions/${subscription.id}`);
    const window = page.getByRole("form", { name: "Recovery window" });
    // datetime-local takes the browser's local time, which is this process's.
    const local = new Date(outageStart - 60_000 - new Date().getTimezoneOffset() * 60_000);
    await window.getByLabel("Failed since").fill(local.toISOString().slice(0, 16));
    await window.getByRole("button", { name: "Preview" }).click();
    await expect
      .poll(() => page.getByRole("status").allTextContents())
      .toContainEqual(expect.stringContaining("30 failed deliveries in the window"));
    await page.getByRole("button", { name: "Recover 30 deliveries" }).click();
    const job = page.getByLabel("Recovery job");
    await expect.poll(() => job.textContent()).toContain(`recover-${subscription.id}-1`);
    await expect.poll(() => hook.received.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    await page.getByRole("button", { name: "Cancel recovery" }).click();
    await expect.poll(() => job.textContent(), { timeout: 15_000 }).toContain("cancelled");

    const recovery = ((await call("GET", `${base()}/${subscription.id}/recovery`)).json as { recovery: Json })
      .recovery;
    // The series under way when it was cancelled ended; no other started.
    expect(recovery).toMatchObject({ status: "cancelled", total: 30 });
    expect(recovery.done).toBeLessThan(30);
    expect(hook.received.length).toBe(recovery.succeeded);
    expect(await job.textContent()).toContain(`${recovery.done} of 30`);
    expect(problems).toEqual([]);
  });
});

describe("alert rules", () => {
  it("shows the rule's last firing per workflow as the API reads it, on the subscription and in the list", async () => {
    const backend = await receiver((_, response) => sendJson(response, 404, { missing: true }));
    const failing = await createWorkflow(flowlog.store, account.workspaceId, "Hourly import", null, {
      blocks: {
        start: { type: "starter", name: "Start", config: {}, enabled: true },
        api: { type: "api", name: "API", config: { url: backend.origin, method: "GET" }, enabled: true },
      },
      edges: [{ source: "start", target: "api" }],
      loops: {},
      parallels: {},
    });
    const hook = await acknowledging();
    const { subscription } = await createOverApi({
      channel: "webhook",
      webhook: { url: hook.origin },
      workflowIds: [failing],
      alertRule: { rule: "consecutive_failures", threshold: 1 },
    });
    const workflows = clientWithKey(WorkflowsService, flowlog.server.url, account.key);
    expect((await workflows.executeWorkflow({ id: failing })).status).toBe("error");
    const [state] = await untilApi("the alert's firing", async () => {
      const states = (await read(subscription.id)).alertStates;
      return states.length ? states : undefined;
    });

    const { page, problems } = await openPage(`subscriptions/${subscription.id}`);
    const row = page.locator("table.alert-states tbody tr");
    await expect
      .poll(() => row.locator("td").allTextContents())
      .toEqual([
        "Hourly import",
        "consecutive_failures",
        "firing",
        expect.any(String),
        state?.reason,
        "–",
        "–",
      ]);
    expect(await row.locator("td").nth(3).getAttribute("title")).toBe(state?.lastFiredAt);

    await page.getByRole("link", { name: "All subscriptions" }).click();
    const listedRow = page.locator("table.subscriptions tbody tr", {
      has: page.locator(`a[href*="${subscription.id}"]`),
    });
    await expect.poll(() => listedRow.textContent()).toContain("firing for 1 workflow");
    await expect
      .poll(() => page.locator("table.subscriptions tbody tr").count())
      .toBe((await listed()).length);
    await screenshot(page, "subscriptions");
    expect(problems).toEqual([]);
  });
});
