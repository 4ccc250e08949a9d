import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotificationsService } from "../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { clientWithKey, restWithKey, rpcError } from "./support/api-server.js";
import {
  createAccount,
  createWorkflow,
  startFlowlog,
  steppingClock,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { isoMs } from "./support/formats.js";

let flowlog: TestFlowlog;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  flowlog = await startFlowlog({ clock: steppingClock() });
  alice = await createAccount(flowlog.store);
  bob = await createAccount(flowlog.store);
});
afterAll(() => flowlog.close());

type Json = Record<string, unknown>;
type SubscriptionJson = Json & { id: string; webhook?: Json; active: boolean };

/**
 * What a webhook's answer shows besides its URL and secret when it sets no headers, signs the spec's way
 * and sends no trace context (D38, D39, D50).
 */
const serviceScheme = { headerNames: [], signatureScheme: "service", propagateTraceContext: false };

const base = (workspaceId = alice.workspaceId) => `/api/v1/workspaces/${workspaceId}/notifications`;

/** A REST call with Alice's key unless another is given. */
const call = (method: string, path: string, body?: unknown, key: string = alice.key) =>
  restWithKey(flowlog.server.url, key, method, path, body);

const webhookTo = (url = "https://receiver.example.test/hooks") => ({
  channel: "webhook",
  webhook: { url },
  allWorkflows: true,
});

async function createOverRest(body: Json, workspaceId = alice.workspaceId, key = alice.key) {
  const response = await call("POST", base(workspaceId), body, key);
  expect(response.status, response.text).toBe(200);
  return response.json as { subscription: SubscriptionJson; secret?: string };
}

/** The field violations of a refused create, as REST clients read them (D10). */
async function refusedFields(body: Json, method = "POST", path = base()): Promise<string[]> {
  const response = await call(method, path, body);
  expect(response.status, response.text).toBe(400);
  const problem = response.json as { code: string; errors: { field: string }[] };
  expect(problem.code).toBe("invalid_argument");
  return problem.errors.map((e) => e.field);
}

describe("subscriptions over REST (D18)", () => {
  it("creates a webhook subscription and reads it back with every field, active by default", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId);
    const { subscription, secret } = await createOverRest({
      channel: "webhook",
      webhook: { url: "https://receiver.example.test/hooks" },
      workflowIds: [workflowId],
      levelFilter: ["error"],
      triggerFilter: ["api", "schedule"],
      includeFinalOutput: true,
      includeUsageData: true,
      alertRule: { rule: "failure_rate", threshold: 25, windowHours: 24 },
    });
    expect(secret).toBeUndefined();
    expect(subscription).toEqual({
      id: expect.stringMatching(/^sub_/),
      workspaceId: alice.workspaceId,
      channel: "webhook",
      webhook: { url: "https://receiver.example.test/hooks", hasSecret: false, ...serviceScheme },
      workflowIds: [workflowId],
      allWorkflows: false,
      levelFilter: ["error"],
      triggerFilter: ["api", "schedule"],
      includeFinalOutput: true,
      includeTraceSpans: false,
      includeRateLimits: false,
      includeUsageData: true,
      alertRule: { rule: "failure_rate", threshold: 25, windowHours: 24 },
      active: true,
      createdAt: expect.stringMatching(isoMs),
      updatedAt: expect.stringMatching(isoMs),
      alertStates: [],
      eventTypes: ["workflow.execution.completed", "workflow.alert.fired", "workflow.alert.resolved"],
      // D36: never held yet, so no heldSince or heldCount (D30).
      state: "active",
    });
    const read = await call("GET", `${base()}/${subscription.id}`);
    expect(read.status).toBe(200);
    expect((read.json as Json).subscription).toEqual(subscription);
  });

  it("creates e-mail and slack subscriptions with only their channel's settings", async () => {
    const email = await createOverRest({
      channel: "email",
      email: { recipients: ["ops@example.test", "dev@example.test"] },
      allWorkflows: true,
    });
    expect(email.subscription).toMatchObject({
      channel: "email",
      email: { recipients: ["ops@example.test", "dev@example.test"] },
    });
    expect(email.subscription).not.toHaveProperty("webhook");
    const slack = await createOverRest({
      channel: "slack",
      slack: { url: "https://hooks.slack.example.test/T000/B000/XXX" },
      allWorkflows: true,
    });
    expect(slack.subscription).toMatchObject({ channel: "slack", slack: { url: expect.any(String) } });
    expect(slack.subscription).not.toHaveProperty("email");
  });

  it("lists the workspace's subscriptions oldest first, and never another workspace's", async () => {
    const { subscription: bobs } = await createOverRest(webhookTo(), bob.workspaceId, bob.key);
    const first = (await createOverRest(webhookTo("https://a.example.test/"))).subscription;
    const second = (await createOverRest(webhookTo("https://b.example.test/"))).subscription;
    const listed = (await call("GET", base())).json as { subscriptions: SubscriptionJson[] };
    const ids = listed.subscriptions.map((s) => s.id);
    expect(ids.indexOf(first.id)).toBeLessThan(ids.indexOf(second.id));
    expect(ids).not.toContain(bobs.id);
  });

  it("an update changes only the fields it sets", async () => {
    const workflowId = await createWorkflow(flowlog.store, alice.workspaceId);
    const { subscription } = await createOverRest({
      ...webhookTo(),
      levelFilter: ["error"],
      includeTraceSpans: true,
    });
    const response = await call("PATCH", `${base()}/${subscription.id}`, {
      triggerFilter: ["manual"],
      workflowIds: [workflowId],
    });
    expect(response.status, response.text).toBe(200);
    const updated = (response.json as { subscription: SubscriptionJson }).subscription;
    expect(updated).toMatchObject({
      webhook: { url: "https://receiver.example.test/hooks" },
      levelFilter: ["error"],
      triggerFilter: ["manual"],
      includeTraceSpans: true,
      allWorkflows: false,
      workflowIds: [workflowId],
      createdAt: subscription.createdAt,
    });
    expect(updated.updatedAt).not.toBe(subscription.updatedAt);
  });

  it("a PATCH that sends an empty filter sets it back to all (the body's keys are the update mask)", async () => {
    const { subscription } = await createOverRest({
      ...webhookTo(),
      levelFilter: ["error"],
      triggerFilter: ["api"],
    });
    const response = await call("PATCH", `${base()}/${subscription.id}`, { levelFilter: [] });
    expect(response.status, response.text).toBe(200);
    expect((response.json as { subscription: SubscriptionJson }).subscription).toMatchObject({
      levelFilter: [],
      triggerFilter: ["api"],
    });
  });

  it("an update switches the channel when it gives the new channel's settings", async () => {
    const { subscription } = await createOverRest({
      ...webhookTo(),
      webhook: { url: "https://x.test/", generateSecret: true },
    });
    const switched = await call("PATCH", `${base()}/${subscription.id}`, {
      channel: "email",
      email: { recipients: ["ops@example.test"] },
    });
    expect(switched.status, switched.text).toBe(200);
    expect((switched.json as Json).subscription).toMatchObject({ channel: "email" });
    expect((switched.json as Json).subscription).not.toHaveProperty("webhook");
    expect(await refusedFields({ channel: "slack" }, "PATCH", `${base()}/${subscription.id}`)).toEqual([
      "slack",
    ]);
    // Back to webhook: the earlier secret is gone with the earlier channel.
    const back = await call("PATCH", `${base()}/${subscription.id}`, {
      channel: "webhook",
      webhook: { url: "https://x.test/" },
    });
    expect((back.json as { subscription: SubscriptionJson }).subscription.webhook).toEqual({
      url: "https://x.test/",
      hasSecret: false,
      ...serviceScheme,
    });
    expect((await flowlog.store.notifications.getForDelivery(subscription.id))?.secret).toBeNull();
  });

  it("an alert rule with an empty rule removes the rule", async () => {
    const { subscription } = await createOverRest({
      ...webhookTo(),
      alertRule: { rule: "cost_threshold", threshold: 2.5 },
    });
    expect(subscription.alertRule).toEqual({ rule: "cost_threshold", threshold: 2.5 });
    const response = await call("PATCH", `${base()}/${subscription.id}`, { alertRule: {} });
    expect(response.status, response.text).toBe(200);
    expect((response.json as Json).subscription).not.toHaveProperty("alertRule");
  });

  it("shows when the rule last fired for each workflow, and why (D21)", async () => {
    const { subscription } = await createOverRest({
      ...webhookTo(),
      alertRule: { rule: "error_count", threshold: 2, windowHours: 24 },
    });
    expect(subscription.alertStates).toEqual([]);
    const reason = "3 executions failed in the last 24 h, more than 2";
    await flowlog.store.alerts.claim({
      subscriptionId: subscription.id,
      workflowId: "wf_alerting",
      rule: "error_count",
      firedAt: Date.parse("2026-11-01T10:00:00.000Z"),
      eventId: "evt_alerting",
      reason,
    });
    const response = await call("GET", `${base()}/${subscription.id}`);
    expect((response.json as Json).subscription).toMatchObject({
      alertStates: [
        { workflowId: "wf_alerting", rule: "error_count", lastFiredAt: "2026-11-01T10:00:00.000Z", reason },
      ],
    });
  });

  it("a deleted subscription is 404 and no longer listed", async () => {
    const { subscription } = await createOverRest(webhookTo());
    expect((await call("DELETE", `${base()}/${subscription.id}`)).status).toBe(200);
    expect((await call("GET", `${base()}/${subscription.id}`)).status).toBe(404);
    expect((await call("DELETE", `${base()}/${subscription.id}`)).status).toBe(404);
    expect((await call("PATCH", `${base()}/${subscription.id}`, { levelFilter: ["info"] })).status).toBe(404);
    const listed = (await call("GET", base())).json as { subscriptions: SubscriptionJson[] };
    expect(listed.subscriptions.map((s) => s.id)).not.toContain(subscription.id);
  });

  it("disable and enable switch active and keep every setting", async () => {
    const { subscription } = await createOverRest({ ...webhookTo(), levelFilter: ["error"] });
    const disabled = await call("POST", `${base()}/${subscription.id}:disable`, {});
    expect(disabled.status, disabled.text).toBe(200);
    expect((disabled.json as Json).subscription).toMatchObject({ active: false, levelFilter: ["error"] });
    const enabled = await call("POST", `${base()}/${subscription.id}:enable`, {});
    expect((enabled.json as Json).subscription).toMatchObject({ active: true, levelFilter: ["error"] });
  });
});

describe("subscriptions over Connect", () => {
  it("creates, updates, disables, lists and deletes through the same handlers", async () => {
    const client = clientWithKey(NotificationsService, flowlog.server.url, alice.key);
    const created = await client.createSubscription({
      workspaceId: alice.workspaceId,
      subscription: {
        channel: "slack",
        slack: { url: "https://chat.example.test/hook" },
        allWorkflows: true,
      },
    });
    const id = created.subscription?.id as string;
    expect(created.subscription).toMatchObject({ channel: "slack", active: true, allWorkflows: true });
    const updated = await client.updateSubscription({
      workspaceId: alice.workspaceId,
      id,
      subscription: { triggerFilter: ["chat"] },
    });
    expect(updated.subscription?.triggerFilter).toEqual(["chat"]);
    // Without a mask an empty list keeps the filter; a mask naming it clears it.
    const kept = await client.updateSubscription({ workspaceId: alice.workspaceId, id, subscription: {} });
    expect(kept.subscription?.triggerFilter).toEqual(["chat"]);
    const cleared = await client.updateSubscription({
      workspaceId: alice.workspaceId,
      id,
      subscription: {},
      updateMask: { paths: ["trigger_filter"] },
    });
    expect(cleared.subscription?.triggerFilter).toEqual([]);
    const disabled = await client.disableSubscription({ workspaceId: alice.workspaceId, id });
    expect(disabled.subscription?.active).toBe(false);
    const listed = await client.listSubscriptions({ workspaceId: alice.workspaceId });
    expect(listed.subscriptions.find((s) => s.id === id)?.active).toBe(false);
    await client.deleteSubscription({ workspaceId: alice.workspaceId, id });
    const error = await rpcError(() => client.getSubscription({ workspaceId: alice.workspaceId, id }));
    expect(error.code).toBe(Code.NotFound);
  });

  it("names bad fields relative to the subscription over Connect too", async () => {
    const client = clientWithKey(NotificationsService, flowlog.server.url, alice.key);
    const error = await rpcError(() =>
      client.createSubscription({
        workspaceId: alice.workspaceId,
        subscription: { channel: "webhook", webhook: { url: "ftp://x.test/" }, allWorkflows: true },
      }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.message).toContain("webhook.url");
  });
});

describe("validation: every error names its field", () => {
  const cases: [string, Json, string[]][] = [
    ["a missing channel", { webhook: { url: "https://x.test/" }, allWorkflows: true }, ["channel"]],
    ["an unknown channel", { channel: "sms", allWorkflows: true }, ["channel"]],
    ["the channel's settings left out", { channel: "webhook", allWorkflows: true }, ["webhook"]],
    ["another channel's settings", { ...webhookTo(), slack: { url: "https://x.test/" } }, ["slack"]],
    ["a webhook without a url", { channel: "webhook", webhook: {}, allWorkflows: true }, ["webhook.url"]],
    ["a webhook url that does not parse", webhookTo("not a url"), ["webhook.url"]],
    ["a webhook url with another scheme", webhookTo("ftp://files.example.test/in"), ["webhook.url"]],
    ["a javascript: url", webhookTo("javascript:alert(1)"), ["webhook.url"]],
    [
      "a slack url with another scheme",
      { channel: "slack", slack: { url: "file:///etc/passwd" }, allWorkflows: true },
      ["slack.url"],
    ],
    [
      "a short webhook secret",
      { ...webhookTo(), webhook: { url: "https://x.test/", secret: "short" } },
      ["webhook.secret"],
    ],
    [
      "a secret and generateSecret both",
      { ...webhookTo(), webhook: { url: "https://x.test/", secret: "s".repeat(20), generateSecret: true } },
      ["webhook.secret"],
    ],
    [
      "no e-mail recipients",
      { channel: "email", email: { recipients: [] }, allWorkflows: true },
      ["email.recipients"],
    ],
    [
      "eleven e-mail recipients",
      {
        channel: "email",
        email: { recipients: Array.from({ length: 11 }, (_, i) => `u${i}@example.test`) },
        allWorkflows: true,
      },
      ["email.recipients"],
    ],
    [
      "an implausible e-mail address",
      {
        channel: "email",
        email: { recipients: ["a@example.test", "b@example.test", "not-an-address"] },
        allWorkflows: true,
      },
      ["email.recipients[2]"],
    ],
    [
      "an address that would inject a header",
      { channel: "email", email: { recipients: ["a@example.test\r\nBcc: x@evil.test"] }, allWorkflows: true },
      ["email.recipients[0]"],
    ],
    ["an unknown level", { ...webhookTo(), levelFilter: ["warning", "error"] }, ["levelFilter[0]"]],
    ["an unknown trigger", { ...webhookTo(), triggerFilter: ["api", "cron"] }, ["triggerFilter[1]"]],
    ["no workflow selection", { channel: "webhook", webhook: { url: "https://x.test/" } }, ["workflowIds"]],
    ["workflow ids with allWorkflows", { ...webhookTo(), workflowIds: ["wf_x"] }, ["workflowIds"]],
    [
      "a workflow that does not exist",
      { channel: "webhook", webhook: { url: "https://x.test/" }, workflowIds: ["wf_missing"] },
      ["workflowIds[0]"],
    ],
    [
      "an unknown alert rule",
      { ...webhookTo(), alertRule: { rule: "too_slow", threshold: 1 } },
      ["alertRule.rule"],
    ],
    ["a threshold without a rule", { ...webhookTo(), alertRule: { threshold: 3 } }, ["alertRule.rule"]],
    [
      "a zero latency threshold",
      { ...webhookTo(), alertRule: { rule: "latency_threshold", threshold: 0 } },
      ["alertRule.threshold"],
    ],
    [
      "a fractional count of failures",
      { ...webhookTo(), alertRule: { rule: "consecutive_failures", threshold: 2.5 } },
      ["alertRule.threshold"],
    ],
    [
      "a failure rate above 100 percent",
      { ...webhookTo(), alertRule: { rule: "failure_rate", threshold: 150, windowHours: 24 } },
      ["alertRule.threshold"],
    ],
    [
      "a negative cost threshold",
      { ...webhookTo(), alertRule: { rule: "cost_threshold", threshold: -1 } },
      ["alertRule.threshold"],
    ],
    [
      "a windowed rule without its window",
      { ...webhookTo(), alertRule: { rule: "error_count", threshold: 3 } },
      ["alertRule.windowHours"],
    ],
    [
      "a window of zero hours",
      { ...webhookTo(), alertRule: { rule: "latency_spike", threshold: 50, windowHours: 0 } },
      ["alertRule.windowHours"],
    ],
    [
      "a window on a rule without one",
      { ...webhookTo(), alertRule: { rule: "no_activity", threshold: 24, windowHours: 24 } },
      ["alertRule.windowHours"],
    ],
  ];

  it.each(cases)("refuses %s", async (_, body, fields) => {
    expect(await refusedFields(body)).toEqual(fields);
  });

  // The rules the .proto declares are checked together, before the service's own (the URL policy, the
  // workflows that exist), which a request meets once it passes them.
  it("reports every bad field at once", async () => {
    const fields = await refusedFields({
      channel: "webhook",
      webhook: { url: "no url at all" },
      allWorkflows: true,
      levelFilter: ["debug"],
      triggerFilter: ["cron"],
    });
    expect(fields).toEqual(["webhook.url", "levelFilter[0]", "triggerFilter[0]"]);
  });

  it("refuses a workflow of another workspace or a deleted one like a missing one", async () => {
    const bobsWorkflow = await createWorkflow(flowlog.store, bob.workspaceId);
    const deleted = await createWorkflow(flowlog.store, alice.workspaceId);
    await flowlog.store.workflows.deleteWorkflow(deleted, Date.now());
    const fields = await refusedFields({
      channel: "webhook",
      webhook: { url: "https://x.test/" },
      workflowIds: [bobsWorkflow, deleted],
    });
    expect(fields).toEqual(["workflowIds[0]", "workflowIds[1]"]);
  });

  it("accepts every rule with values in its range", async () => {
    const rules = [
      { rule: "consecutive_failures", threshold: 3 },
      { rule: "failure_rate", threshold: 100, windowHours: 1 },
      { rule: "latency_threshold", threshold: 0.5 },
      { rule: "latency_spike", threshold: 300, windowHours: 24 },
      { rule: "cost_threshold", threshold: 0.01 },
      { rule: "no_activity", threshold: 26 },
      { rule: "error_count", threshold: 0, windowHours: 0.5 },
    ];
    for (const alertRule of rules) {
      expect((await createOverRest({ ...webhookTo(), alertRule })).subscription.alertRule).toEqual(alertRule);
    }
  });

  it("a request without the subscription body names it", async () => {
    const response = await call("POST", base(), undefined);
    expect(response.status).toBe(400);
  });
});

describe("the webhook secret is write-only (D18, D24)", () => {
  it("a generated whsec_ secret is shown once, then only hasSecret", async () => {
    const { subscription, secret } = await createOverRest({
      ...webhookTo(),
      webhook: { url: "https://receiver.example.test/hooks", generateSecret: true },
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(subscription.webhook).toEqual({
      url: "https://receiver.example.test/hooks",
      hasSecret: true,
      ...serviceScheme,
    });
    const path = `${base()}/${subscription.id}`;
    const moved = await call("PATCH", path, { webhook: { url: "https://moved.example.test/hooks" } });
    const reads = [
      await call("GET", path),
      await call("GET", base()),
      await call("PATCH", path, { includeRateLimits: true }),
      moved,
      await call("POST", `${path}:disable`, {}),
    ];
    for (const read of reads) {
      expect(read.status, read.text).toBe(200);
      expect(read.text).not.toContain(secret);
      expect(read.text).not.toContain("whsec_");
    }
    // A webhook update without a secret keeps it.
    expect((moved.json as { subscription: SubscriptionJson }).subscription.webhook?.hasSecret).toBe(true);
    expect((await flowlog.store.notifications.getForDelivery(subscription.id))?.secret).toBe(secret);
  });

  it("a given secret is stored encrypted: the database never holds it in plaintext", async () => {
    const given = `given-secret-${"k".repeat(24)}`;
    const { subscription, secret } = await createOverRest({
      ...webhookTo(),
      webhook: { url: "https://receiver.example.test/hooks", secret: given },
    });
    expect(secret).toBeUndefined();
    expect(subscription.webhook).toEqual({
      url: "https://receiver.example.test/hooks",
      hasSecret: true,
      ...serviceScheme,
    });
    const generated = (
      await createOverRest({ ...webhookTo(), webhook: { url: "https://x.test/", generateSecret: true } })
    ).secret as string;
    expect(await flowlog.holds("https://receiver.example.test/hooks")).toBe(true);
    expect(await flowlog.holds(given)).toBe(false);
    expect(await flowlog.holds(generated)).toBe(false);
    expect((await flowlog.store.notifications.getForDelivery(subscription.id))?.secret).toBe(given);
  });

  it("an update can rotate the secret (shown once) or remove it", async () => {
    const { subscription, secret } = await createOverRest({
      ...webhookTo(),
      webhook: { url: "https://x.test/", generateSecret: true },
    });
    const path = `${base()}/${subscription.id}`;
    const rotated = await call("PATCH", path, { webhook: { url: "https://x.test/", generateSecret: true } });
    const rotatedSecret = (rotated.json as { secret: string }).secret;
    expect(rotatedSecret).toMatch(/^whsec_/);
    expect(rotatedSecret).not.toBe(secret);
    expect((await flowlog.store.notifications.getForDelivery(subscription.id))?.secret).toBe(rotatedSecret);
    const removed = await call("PATCH", path, { webhook: { url: "https://x.test/", secret: "" } });
    expect((removed.json as { subscription: SubscriptionJson }).subscription.webhook?.hasSecret).toBe(false);
    expect((await flowlog.store.notifications.getForDelivery(subscription.id))?.secret).toBeNull();
  });
});

describe("event types and pace (D38)", () => {
  const defaultTypes = ["workflow.execution.completed", "workflow.alert.fired", "workflow.alert.resolved"];

  it("a subscription lists the default types until it names its own, once each; a masked empty list restores them", async () => {
    const { subscription } = await createOverRest({
      ...webhookTo(),
      eventTypes: ["subscription.held", "delivery.failed", "subscription.held"],
    });
    expect(subscription.eventTypes).toEqual(["subscription.held", "delivery.failed"]);
    const path = `${base()}/${subscription.id}`;
    const kept = await call("PATCH", path, { includeTraceSpans: true });
    expect((kept.json as { subscription: SubscriptionJson }).subscription.eventTypes).toEqual([
      "subscription.held",
      "delivery.failed",
    ]);
    const restored = await call("PATCH", path, { eventTypes: [] });
    expect((restored.json as { subscription: SubscriptionJson }).subscription.eventTypes).toEqual(
      defaultTypes,
    );
    const operational = ["subscription.released", "subscription.disabled", "workflow.alert.fired"];
    const every = await call("PATCH", path, { eventTypes: operational });
    expect((every.json as { subscription: SubscriptionJson }).subscription.eventTypes).toEqual(operational);
  });

  it("throttlePerSecond is 1 to 1000, absent when unset; 0 or a masked absence removes it", async () => {
    const { subscription } = await createOverRest({ ...webhookTo(), throttlePerSecond: 1000 });
    expect(subscription.throttlePerSecond).toBe(1000);
    const path = `${base()}/${subscription.id}`;
    const changed = await call("PATCH", path, { throttlePerSecond: 1 });
    expect((changed.json as { subscription: SubscriptionJson }).subscription.throttlePerSecond).toBe(1);
    const kept = await call("PATCH", path, { levelFilter: ["error"] });
    expect((kept.json as { subscription: SubscriptionJson }).subscription.throttlePerSecond).toBe(1);
    const removed = await call("PATCH", path, { throttlePerSecond: 0 });
    expect((removed.json as { subscription: SubscriptionJson }).subscription).not.toHaveProperty(
      "throttlePerSecond",
    );
    await call("PATCH", path, { throttlePerSecond: 7 });
    const masked = await call("PATCH", `${path}?updateMask=throttlePerSecond`, {});
    expect((masked.json as { subscription: SubscriptionJson }).subscription).not.toHaveProperty(
      "throttlePerSecond",
    );
    expect((await createOverRest(webhookTo())).subscription).not.toHaveProperty("throttlePerSecond");
  });

  it("an unknown event type or a pace over 1000 is 400 naming the field", async () => {
    expect(await refusedFields({ ...webhookTo(), eventTypes: ["workflow.execution.started"] })).toEqual([
      "eventTypes[0]",
    ]);
    expect(await refusedFields({ ...webhookTo(), throttlePerSecond: 1001 })).toEqual(["throttlePerSecond"]);
    expect(await refusedFields({ ...webhookTo(), eventTypes: Array(101).fill("delivery.failed") })).toEqual([
      "eventTypes",
    ]);
  });
});

describe("a webhook's trace context (D50)", () => {
  it("is off unless asked, and an update that leaves it out keeps it", async () => {
    const plain = await createOverRest(webhookTo());
    expect(plain.subscription.webhook?.propagateTraceContext).toBe(false);
    const { subscription } = await createOverRest({
      ...webhookTo(),
      webhook: { url: "https://x.test/", propagateTraceContext: true },
    });
    expect(subscription.webhook?.propagateTraceContext).toBe(true);
    const path = `${base()}/${subscription.id}`;
    const moved = await call("PATCH", path, { webhook: { url: "https://y.test/" } });
    expect((moved.json as { subscription: SubscriptionJson }).subscription.webhook).toMatchObject({
      url: "https://y.test/",
      propagateTraceContext: true,
    });
    await call("PATCH", path, { webhook: { url: "https://y.test/", propagateTraceContext: false } });
    const read = await call("GET", path);
    expect(
      (read.json as { subscription: SubscriptionJson }).subscription.webhook?.propagateTraceContext,
    ).toBe(false);
    expect((await flowlog.store.notifications.getForDelivery(subscription.id))?.config).toMatchObject({
      propagateTraceContext: false,
    });
  });
});

describe("webhook headers are write-only (D38, D24)", () => {
  it("answers name them in lower case, never show a value, and the database holds none in plaintext", async () => {
    const token = `Bearer token-${"t".repeat(30)}`;
    const created = await call("POST", base(), {
      ...webhookTo(),
      webhook: {
        url: "https://receiver.example.test/hooks",
        headers: { Authorization: token, "X-Tenant": "acme-77" },
      },
    });
    expect(created.status, created.text).toBe(200);
    const { subscription } = created.json as { subscription: SubscriptionJson };
    expect(subscription.webhook).toEqual({
      url: "https://receiver.example.test/hooks",
      hasSecret: false,
      headerNames: ["authorization", "x-tenant"],
      signatureScheme: "service",
      propagateTraceContext: false,
    });
    const path = `${base()}/${subscription.id}`;
    const reads = [
      created,
      await call("GET", path),
      await call("GET", base()),
      await call("POST", `${path}:disable`, {}),
    ];
    for (const read of reads) {
      expect(read.text).not.toContain(token);
      expect(read.text).not.toContain("acme-77");
    }
    expect(await flowlog.holds(token)).toBe(false);
    expect(await flowlog.holds("acme-77")).toBe(false);
    expect((await flowlog.store.notifications.getForDelivery(subscription.id))?.headers).toEqual({
      authorization: token,
      "x-tenant": "acme-77",
    });
  });

  it("an update sets and removes by name and keeps the rest; another channel drops them", async () => {
    const { subscription } = await createOverRest({
      ...webhookTo(),
      webhook: { url: "https://x.test/", headers: { "X-One": "1", "X-Two": "2" } },
    });
    const path = `${base()}/${subscription.id}`;
    const moved = await call("PATCH", path, { webhook: { url: "https://y.test/" } });
    expect((moved.json as { subscription: SubscriptionJson }).subscription.webhook?.headerNames).toEqual([
      "x-one",
      "x-two",
    ]);
    await call("PATCH", path, {
      webhook: { url: "https://y.test/", headers: { "x-two": "", "X-ONE": "one" } },
    });
    expect((await flowlog.store.notifications.getForDelivery(subscription.id))?.headers).toEqual({
      "x-one": "one",
    });
    await call("PATCH", path, { channel: "slack", slack: { url: "https://hooks.example.test/T/B/X" } });
    const back = await call("PATCH", path, { channel: "webhook", webhook: { url: "https://y.test/" } });
    expect((back.json as { subscription: SubscriptionJson }).subscription.webhook?.headerNames).toEqual([]);
    expect((await flowlog.store.notifications.getForDelivery(subscription.id))?.headers).toEqual({});
  });

  it("names the delivery or the connection sets, bad names and values, and more than 20 are 400 naming the header", async () => {
    const refusedHeaders = (headers: Record<string, string>) =>
      refusedFields({ ...webhookTo(), webhook: { url: "https://x.test/", headers } });
    for (const name of [
      "Service-Signature",
      "webhook-id",
      "Idempotency-Key",
      "content-type",
      "Content-Length",
      "host",
      "user-agent",
      "connection",
      "Transfer-Encoding",
    ]) {
      expect(await refusedHeaders({ [name]: "x" })).toEqual([`webhook.headers.${name}`]);
    }
    expect(await refusedHeaders({ "X-Token": "a", "x-token": "b" })).toEqual(["webhook.headers.x-token"]);
    expect(await refusedHeaders({ "bad name": "x" })).toEqual(["webhook.headers.bad name"]);
    expect(await refusedHeaders({ "X-Long": "v".repeat(1025) })).toEqual(["webhook.headers.X-Long"]);
    expect(await refusedHeaders({ "X-Split": "a\r\nInjected: yes" })).toEqual(["webhook.headers.X-Split"]);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, n) => [`x-h${n}`, "v"]));
    expect(await refusedHeaders(many)).toEqual(["webhook.headers"]);
    expect(
      (
        await createOverRest({
          ...webhookTo(),
          webhook: { url: "https://x.test/", headers: { "X-Long": "v".repeat(1024) } },
        })
      ).subscription.webhook?.headerNames,
    ).toEqual(["x-long"]);
    // Twenty stored and one more given in an update: over the bound once merged.
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, n) => [`x-h${n}`, "v"]));
    const { subscription } = await createOverRest({
      ...webhookTo(),
      webhook: { url: "https://x.test/", headers: twenty },
    });
    const over = await refusedFields(
      { webhook: { url: "https://x.test/", headers: { "x-one-more": "v" } } },
      "PATCH",
      `${base()}/${subscription.id}`,
    );
    expect(over).toEqual(["webhook.headers"]);
  });
});

describe("the signature scheme (D39)", () => {
  it("the standard scheme generates a whsec_ secret of 32 bytes in base64, shown once", async () => {
    const { subscription, secret } = await createOverRest({
      ...webhookTo(),
      webhook: { url: "https://x.test/", signatureScheme: "standard", generateSecret: true },
    });
    expect(subscription.webhook).toMatchObject({ signatureScheme: "standard", hasSecret: true });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(String(secret).slice(6), "base64")).toHaveLength(32);
  });

  it("a given standard secret must be whsec_ and base64 of 24 to 64 bytes", async () => {
    const standard = (secret: string) => ({
      ...webhookTo(),
      webhook: { url: "https://x.test/", signatureScheme: "standard", secret },
    });
    for (const secret of [
      `plain-secret-${"p".repeat(20)}`,
      `whsec_${Buffer.alloc(16, 1).toString("base64")}`,
      `whsec_${Buffer.alloc(65, 1).toString("base64")}`,
      `whsec_${Buffer.alloc(32, 250).toString("base64url")}`,
    ]) {
      expect(await refusedFields(standard(secret))).toEqual(["webhook.secret"]);
    }
    const given = `whsec_${Buffer.alloc(24, 7).toString("base64")}`;
    await createOverRest(standard(given));
  });

  it("changing the scheme of a signed webhook takes a new secret in the same request", async () => {
    const { subscription } = await createOverRest({
      ...webhookTo(),
      webhook: { url: "https://x.test/", secret: `service-secret-${"s".repeat(20)}` },
    });
    const path = `${base()}/${subscription.id}`;
    expect(
      await refusedFields(
        { webhook: { url: "https://x.test/", signatureScheme: "standard" } },
        "PATCH",
        path,
      ),
    ).toEqual(["webhook.signatureScheme"]);
    const switched = await call("PATCH", path, {
      webhook: { url: "https://x.test/", signatureScheme: "standard", generateSecret: true },
    });
    expect(switched.status, switched.text).toBe(200);
    expect((switched.json as { secret: string }).secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // Left out, the scheme stays.
    const moved = await call("PATCH", path, { webhook: { url: "https://z.test/" } });
    expect((moved.json as { subscription: SubscriptionJson }).subscription.webhook?.signatureScheme).toBe(
      "standard",
    );
    expect(
      await refusedFields({ webhook: { url: "https://x.test/", signatureScheme: "sha1" } }, "PATCH", path),
    ).toEqual(["webhook.signatureScheme"]);
  });

  it("rotating a standard webhook's secret generates a standard one and refuses any other", async () => {
    const { subscription } = await createOverRest({
      ...webhookTo(),
      webhook: { url: "https://x.test/", signatureScheme: "standard", generateSecret: true },
    });
    const path = `${base()}/${subscription.id}:rotateSecret`;
    // No grace period: the workspace's list stays free of one for the tests of D33 below.
    const rotated = await call("POST", path, { gracePeriodSeconds: 0 });
    expect((rotated.json as { secret: string }).secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const refused = await call("POST", path, { secret: `not-standard-${"n".repeat(20)}` });
    expect(refused.status).toBe(400);
    expect((refused.json as { errors: { field: string }[] }).errors.map((e) => e.field)).toEqual(["secret"]);
  });
});

describe("a replaced secret's grace period (D33)", () => {
  const url = "https://receiver.example.test/hooks";
  const first = `first-secret-${"f".repeat(24)}`;
  const second = `second-secret-${"s".repeat(24)}`;

  /** How many of the replaced secret's two columns the row still holds, read as an operator would. */
  const heldColumns = async (id: string) =>
    (
      await flowlog.sql<{ held: number }>(
        `SELECT CASE WHEN previous_secret_sealed IS NULL THEN 0 ELSE 1 END
           + CASE WHEN previous_secret_expires_at IS NULL THEN 0 ELSE 1 END AS held
         FROM notification_subscriptions WHERE id = @id`,
        { id },
      )
    )[0]?.held;

  async function rotated(gracePeriodSeconds: number): Promise<string> {
    const { subscription } = await createOverRest({ ...webhookTo(url), webhook: { url, secret: first } });
    const rotation = await call("POST", `${base()}/${subscription.id}:rotateSecret`, {
      secret: second,
      gracePeriodSeconds,
    });
    expect(rotation.status, rotation.text).toBe(200);
    expect(await heldColumns(subscription.id)).toBe(2);
    return subscription.id;
  }

  it("once it has passed, the replaced secret is cleared from storage by the next read, one or a list", async () => {
    const reads = [(id: string) => call("GET", `${base()}/${id}`), () => call("GET", base())];
    for (const read of reads) {
      const id = await rotated(1);
      // The API's clock moves a second per reading: by this read the grace period is over.
      const answer = await read(id);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.text).not.toContain("previousSecretExpiresAt");
      expect(await heldColumns(id)).toBe(0);
      expect(await flowlog.store.notifications.getForDelivery(id)).toMatchObject({
        secret: second,
        previousSecret: null,
        previousSecretExpiresAt: null,
      });
    }
  });

  it("while it lasts, reads leave the replaced secret where it is", async () => {
    const id = await rotated(3600);
    const answer = await call("GET", `${base()}/${id}`);
    expect((answer.json as { subscription: SubscriptionJson }).subscription.webhook).toMatchObject({
      previousSecretExpiresAt: expect.stringMatching(isoMs),
    });
    await call("GET", base());
    expect(await heldColumns(id)).toBe(2);
  });
});

describe("workspace isolation (D10)", () => {
  it("a workspace the caller is not a member of is 403 on every route", async () => {
    const { subscription } = await createOverRest(webhookTo(), bob.workspaceId, bob.key);
    const path = `${base(bob.workspaceId)}/${subscription.id}`;
    const responses = [
      await call("GET", base(bob.workspaceId)),
      await call("POST", base(bob.workspaceId), webhookTo()),
      await call("GET", path),
      await call("PATCH", path, { levelFilter: ["error"] }),
      await call("DELETE", path),
      await call("POST", `${path}:enable`, {}),
      await call("POST", `${path}:disable`, {}),
    ];
    expect(responses.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403, 403]);
    expect((await flowlog.store.notifications.get(subscription.id))?.active).toBe(true);
  });

  it("another workspace's subscription id under the caller's own workspace is 404", async () => {
    const { subscription } = await createOverRest(webhookTo(), bob.workspaceId, bob.key);
    const path = `${base()}/${subscription.id}`;
    const responses = [
      await call("GET", path),
      await call("PATCH", path, { levelFilter: ["error"] }),
      await call("DELETE", path),
      await call("POST", `${path}:disable`, {}),
    ];
    expect(responses.map((r) => r.status)).toEqual([404, 404, 404, 404]);
    expect(await flowlog.store.notifications.get(subscription.id)).toMatchObject({
      active: true,
      levelFilter: [],
    });
  });

  it("no key is 401", async () => {
    expect((await restWithKey(flowlog.server.url, null, "GET", base())).status).toBe(401);
  });
});

describe("matching a completed execution (spec Events, D18)", () => {
  it("selects by workflow, level and trigger; empty filters mean all; inactive and deleted never match", async () => {
    const account = await createAccount(flowlog.store);
    const store = flowlog.store.notifications;
    const create = async (body: Json) =>
      (await createOverRest(body, account.workspaceId, account.key)).subscription.id;
    const early = await createWorkflow(flowlog.store, account.workspaceId, "Early");
    const other = await createWorkflow(flowlog.store, account.workspaceId, "Other");
    const everything = await create({
      ...webhookTo(),
      webhook: { url: "https://x.test/", generateSecret: true },
    });
    const errorsOnly = await create({ ...webhookTo(), levelFilter: ["error"] });
    const scheduledOnly = await create({ ...webhookTo(), triggerFilter: ["schedule", "manual"] });
    const earlyOnly = await create({
      channel: "email",
      email: { recipients: ["a@example.test"] },
      workflowIds: [early],
    });
    const disabled = await create(webhookTo());
    await call("POST", `${base(account.workspaceId)}/${disabled}:disable`, {}, account.key);
    const deleted = await create(webhookTo());
    await call("DELETE", `${base(account.workspaceId)}/${deleted}`, undefined, account.key);
    // Created after the subscriptions: allWorkflows covers future workflows too.
    const later = await createWorkflow(flowlog.store, account.workspaceId, "Later");

    const matched = async (
      workflowId: string,
      level: "info" | "error",
      trigger: "api" | "schedule" | "chat",
    ) => (await store.matching(account.workspaceId, { workflowId, level, trigger })).map((s) => s.id);

    expect(await matched(later, "info", "api")).toEqual([everything]);
    expect(await matched(later, "error", "api")).toEqual([everything, errorsOnly]);
    expect(await matched(later, "info", "schedule")).toEqual([everything, scheduledOnly]);
    expect(await matched(early, "info", "chat")).toEqual([everything, earlyOnly]);
    expect(await matched(other, "error", "schedule")).toEqual([everything, errorsOnly, scheduledOnly]);
    const alices = await store.matching(alice.workspaceId, {
      workflowId: later,
      level: "info",
      trigger: "api",
    });
    expect(alices.map((s) => s.id)).not.toContain(everything);

    await call("POST", `${base(account.workspaceId)}/${disabled}:enable`, {}, account.key);
    expect(await matched(later, "info", "api")).toEqual([everything, disabled]);
  });

  it("hands delivery the channel settings with the decrypted secret", async () => {
    const account = await createAccount(flowlog.store);
    const { subscription, secret } = await createOverRest(
      {
        ...webhookTo(),
        webhook: { url: "https://x.test/in", generateSecret: true },
        includeFinalOutput: true,
      },
      account.workspaceId,
      account.key,
    );
    const [match] = await flowlog.store.notifications.matching(account.workspaceId, {
      workflowId: "wf_any",
      level: "info",
      trigger: "api",
    });
    expect(match).toMatchObject({
      id: subscription.id,
      config: { channel: "webhook", url: "https://x.test/in" },
      secret,
      include: { finalOutput: true, traceSpans: false, rateLimits: false, usage: false },
      deletedAt: null,
    });
    await call("DELETE", `${base(account.workspaceId)}/${subscription.id}`, undefined, account.key);
    expect(await flowlog.store.notifications.getForDelivery(subscription.id)).toMatchObject({
      secret,
      deletedAt: expect.any(Number),
    });
  });
});
