import { randomUUID } from "node:crypto";
import { Client, Connection, WorkflowNotFoundError } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AlertRuleRecord } from "../src/domain/alert-rules.js";
import { ProcessMetrics } from "../src/logging/metrics.js";
import type { AlertResolvedEvent } from "../src/notifications/alert-event.js";
import { type AlertOutcome, alertOutcomeOf } from "../src/notifications/alert-outcome.js";
import type { CompletionEvent } from "../src/notifications/event.js";
import type { SlackMessage } from "../src/notifications/slack.js";
import { verifyWebhook } from "../src/notifications/verify-webhook.js";
import { alertCooldownMs } from "../src/store/alerts-store.js";
import type { Level } from "../src/store/records.js";
import type { Store } from "../src/store/store.js";
import type { ChannelConfigInput } from "../src/store/subscriptions-store.js";
import { eventIdOf } from "../src/temporal/activities/delivery-activities.js";
import { fanOutWorkflowId } from "../src/temporal/delivery-ids.js";
import { newId } from "../src/util/ids.js";
import { restWithKey } from "./support/api-server.js";
import {
  fanOutDeliveries,
  notifyingDeps,
  type RunningWorker,
  runToEnd,
  startWorker,
} from "./support/engine.js";
import {
  createAccount,
  createWorkflow,
  execution,
  startFlowlog,
  subscribe,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { isoMs } from "./support/formats.js";
import { type HttpReceiver, sendJson, startReceiver } from "./support/http-receiver.js";
import { type SmtpServer, startSmtpServer } from "./support/smtp-server.js";
import { untilTrue } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `alert-recovery-${randomUUID()}`;

let flowlog: TestFlowlog;
let store: Store;
let worker: RunningWorker;
let connection: Connection;
let temporal: Client;
let smtp: SmtpServer;
let alice: TestAccount;
const receivers: HttpReceiver[] = [];
/** The worker's Prometheus metrics (issue 16), to see each alert transition counted once. */
const metrics = new ProcessMetrics("worker");

/** How many firings or resolutions of a rule the worker has counted so far. */
async function alertsCounted(rule: string, transition: "fired" | "resolved"): Promise<number> {
  const values = (await metrics.registry.getSingleMetric("flowlog_alerts_total")?.get())?.values ?? [];
  return values.find((v) => v.labels.rule === rule && v.labels.transition === transition)?.value ?? 0;
}

beforeAll(async () => {
  flowlog = await startFlowlog({ taskQueue });
  store = flowlog.store;
  smtp = await startSmtpServer({ user: "flowlog", password: "smtp-password-for-tests", replies: {} });
  worker = await startWorker(
    temporalServer,
    notifyingDeps(store, { smtpUrl: smtp.url }, { metrics }),
    taskQueue,
  );
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
  alice = await createAccount(store);
});

afterAll(async () => {
  await worker?.stop();
  await connection?.close();
  await flowlog?.close();
  await smtp?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

const t0 = Date.parse("2026-11-01T00:00:00.000Z");
const minutes = (n: number) => n * 60 * 1000;
const hours = (n: number) => n * 60 * 60 * 1000;

interface Run {
  at: number;
  level?: Level;
  durationMs?: number;
  cost?: number;
}

/**
 * A subscription with the rule on one workflow, and what its rule makes of each execution logged at a
 * controlled time (D21 "now" is the execution's end), through the fan-out's own judgement.
 */
async function watched(rule: AlertRuleRecord, on: Store = store) {
  const workflowId = await createWorkflow(store, alice.workspaceId, "Nightly export");
  const subscriptionId = await subscribeWebhook(store, alice.workspaceId, "https://example.test/hook", {
    allWorkflows: false,
    workflowIds: [workflowId],
    alertRule: rule,
  });
  const log = async ({ at, level = "info", durationMs = 1000, cost }: Run) => {
    const record = execution(alice, workflowId, { startedAt: at, totalDurationMs: durationMs, level });
    if (cost !== undefined) record.entry.cost = { ...record.entry.cost, total: cost };
    await store.logs.insertExecution(record);
    return record.entry;
  };
  const judge = async (entry: ReturnType<typeof log>, by = on): Promise<AlertOutcome> => {
    const subscription = await by.notifications.getForDelivery(subscriptionId);
    if (!subscription?.alertRule) throw new Error("the subscription has no rule");
    return alertOutcomeOf(by, subscription, subscription.alertRule, await entry, eventIdOf((await entry).id));
  };
  /** Each run's outcome in a word: fired, resolved, or "-" for nothing sent. */
  /** One after another: each judgement sees the runs logged before it. */
  const outcomes = async (runs: Run[]) => {
    const kinds: string[] = [];
    for (const run of runs) kinds.push(kindOf(await judge(log(run))));
    return kinds;
  };
  return { workflowId, subscriptionId, log, judge, outcomes };
}

function kindOf(outcome: AlertOutcome): "fired" | "resolved" | "-" {
  if (outcome === null) return "-";
  return "fired" in outcome ? "fired" : "resolved";
}

function resolvedEvent(outcome: AlertOutcome): AlertResolvedEvent {
  if (outcome === null || !("resolved" in outcome)) throw new Error("not a resolution");
  return outcome.resolved;
}

const error = (at: number, extra: Partial<Run> = {}): Run => ({ at, level: "error", ...extra });

describe("Recovery: when each rule's firing is over (D34)", () => {
  it("consecutive_failures resolves on the next success, not on another failure", async () => {
    const { outcomes } = await watched({ rule: "consecutive_failures", threshold: 2, windowHours: null });
    const runs = [error(t0), error(t0 + minutes(1)), error(t0 + minutes(2)), { at: t0 + minutes(3) }];
    expect(await outcomes(runs)).toEqual(["-", "fired", "-", "resolved"]);
  });

  it("failure_rate resolves once the rate over the window is back at or under X %, not on the first success", async () => {
    const { outcomes } = await watched({ rule: "failure_rate", threshold: 50, windowHours: 24 });
    const start = t0 + hours(30);
    const runs: Run[] = [
      { at: t0 },
      { at: start },
      ...[1, 2, 3, 4].map((n) => error(start + n)),
      // 4 of 6 failed, then 4 of 7: still above 50 %; 4 of 8 is not.
      ...[5, 6, 7].map((n) => ({ at: start + n })),
    ];
    expect(await outcomes(runs)).toEqual(["-", "-", "-", "-", "-", "fired", "-", "-", "resolved"]);
  });

  it("latency_threshold resolves on the next execution within X seconds", async () => {
    const { outcomes } = await watched({ rule: "latency_threshold", threshold: 10, windowHours: null });
    const runs = [10_001, 12_000, 10_000].map((durationMs, i) => ({ at: t0 + minutes(i), durationMs }));
    expect(await outcomes(runs)).toEqual(["fired", "-", "resolved"]);
  });

  it("latency_spike resolves on the next execution that is no spike against its own baseline", async () => {
    const { outcomes } = await watched({ rule: "latency_spike", threshold: 100, windowHours: 24 });
    const baseline = [0, 1, 2, 3, 4].map((i) => ({ at: t0 + minutes(i), durationMs: 1000 }));
    // The spike joins the next one's baseline: (5 x 1000 + 2500) / 6 = 1250 ms, and 1500 ms is 20 % above.
    const runs = [
      ...baseline,
      { at: t0 + minutes(5), durationMs: 2500 },
      { at: t0 + minutes(6), durationMs: 1500 },
    ];
    expect(await outcomes(runs)).toEqual(["-", "-", "-", "-", "-", "fired", "resolved"]);
  });

  it("cost_threshold resolves on the next execution costing X USD or less", async () => {
    const { outcomes } = await watched({ rule: "cost_threshold", threshold: 0.5, windowHours: null });
    const runs = [0.6, 0.7, 0.5].map((cost, i) => ({ at: t0 + minutes(i), cost }));
    expect(await outcomes(runs)).toEqual(["fired", "-", "resolved"]);
  });

  it("error_count resolves on the first execution that sees X errors or fewer in its window", async () => {
    const { outcomes } = await watched({ rule: "error_count", threshold: 2, windowHours: 24 });
    // The success an hour later still sees 3 errors; a day later they have left the window.
    const runs = [
      error(t0),
      error(t0 + hours(1)),
      error(t0 + hours(2)),
      { at: t0 + hours(3) },
      { at: t0 + hours(27) },
    ];
    expect(await outcomes(runs)).toEqual(["-", "-", "fired", "-", "resolved"]);
  });

  it("no_activity resolves on the next execution, naming the firing the watcher claimed", async () => {
    const { subscriptionId, workflowId, log, judge } = await watched({
      rule: "no_activity",
      threshold: 6,
      windowHours: null,
    });
    const firingId = newId("evt");
    const reason = "No execution of Nightly export in 6 hours (threshold 6 hours; it has never run)";
    await store.alerts.claim({
      subscriptionId,
      workflowId,
      rule: "no_activity",
      firedAt: t0,
      eventId: firingId,
      reason,
    });
    const event = resolvedEvent(await judge(log({ at: t0 + hours(1) })));
    expect(event.data.alert).toMatchObject({ rule: "no_activity", eventId: firingId, reason, threshold: 6 });
    expect(event.data.resolution.reason).toBe("An execution arrived (started 2026-11-01T01:00:00.000Z)");
  });
});

describe("Firing and resolution alternate per (subscription, workflow) (D34, D21)", () => {
  const rule: AlertRuleRecord = { rule: "consecutive_failures", threshold: 1, windowHours: null };

  it("a resolution carries the rule, the firing it resolves, when and why", async () => {
    const { workflowId, log, judge } = await watched({
      rule: "consecutive_failures",
      threshold: 2,
      windowHours: null,
    });
    await judge(log(error(t0)));
    const tripping = log(error(t0 + minutes(1)));
    await judge(tripping);
    const success = log({ at: t0 + minutes(2) });
    const event = resolvedEvent(await judge(success));
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: "workflow.alert.resolved",
      timestamp: (await success).endedAt,
      data: {
        workflowId,
        workflowName: "Nightly export",
        alert: {
          rule: "consecutive_failures",
          reason: "2 executions failed in a row",
          threshold: 2,
          windowHours: null,
          firedAt: new Date((await tripping).endedAt).toISOString(),
          eventId: eventIdOf((await tripping).id),
        },
        resolution: {
          reason: `An execution succeeded (started ${new Date((await success).startedAt).toISOString()})`,
          observed: 0,
          resolvedAt: new Date((await success).endedAt).toISOString(),
          logId: (await success).id,
        },
      },
    });
  });

  it("while a firing is open the rule does not fire again, even hours later", async () => {
    const { outcomes } = await watched(rule);
    expect(await outcomes([error(t0), error(t0 + hours(2)), error(t0 + hours(5))])).toEqual([
      "fired",
      "-",
      "-",
    ]);
  });

  it("never resolves twice in a row: a second success finds nothing to resolve", async () => {
    const { outcomes } = await watched(rule);
    expect(await outcomes([error(t0), { at: t0 + minutes(1) }, { at: t0 + minutes(2) }])).toEqual([
      "fired",
      "resolved",
      "-",
    ]);
  });

  it("a resolution is not held back by the cooldown; the next firing waits an hour from the last (D21)", async () => {
    const { outcomes } = await watched(rule);
    const runs: Run[] = [
      error(t0),
      { at: t0 + minutes(1) },
      error(t0 + minutes(2)),
      error(t0 + alertCooldownMs - 1001),
      error(t0 + alertCooldownMs),
      { at: t0 + alertCooldownMs + minutes(1) },
    ];
    // Each execution lasts 1 s: the fourth ends 1 ms before the hour is over, the fifth after it.
    expect(await outcomes(runs)).toEqual(["fired", "resolved", "-", "-", "fired", "resolved"]);
  });

  it("a retried evaluation finds its own resolution and builds the very same event", async () => {
    const { subscriptionId, workflowId, log, judge } = await watched(rule);
    const failing = log(error(t0));
    const fired = await judge(failing);
    const success = log({ at: t0 + minutes(1) });
    const first = resolvedEvent(await judge(success));
    expect(resolvedEvent(await judge(success))).toEqual(first);
    // The firing, retried after its resolution, finds its own claim too, and leaves the resolution be.
    expect(await judge(failing)).toEqual(fired);
    expect(await store.alerts.state(subscriptionId, workflowId)).toMatchObject({
      status: "resolved",
      resolvedEventId: first.id,
    });
  });

  it("the claims are one conditional write each: on two connections, one resolution and no firing while open", async () => {
    const other = await flowlog.openAnother();
    try {
      const pair = { subscriptionId: (await watched(rule)).subscriptionId, workflowId: "wf_pair" };
      const fire = (at: number, on: Store) =>
        on.alerts.claim({
          ...pair,
          rule: "consecutive_failures",
          firedAt: at,
          eventId: newId("evt"),
          reason: "1",
        });
      const resolve = (at: number, on: Store) =>
        on.alerts.resolve({
          ...pair,
          rule: "consecutive_failures",
          resolvedAt: at,
          eventId: newId("evt"),
          reason: "ok",
        });
      expect(await fire(t0, store)).toBe(true);
      expect(await fire(t0 + hours(2), other)).toBe(false);
      // Neither the cooldown nor the other connection holds back the first resolution; the second finds none.
      expect(await resolve(t0 + 1, other)).toMatchObject({ status: "resolved", lastFiredAt: t0 });
      expect(await resolve(t0 + 2, store)).toBeUndefined();
      expect(await fire(t0 + hours(2), store)).toBe(true);
    } finally {
      await other.close();
    }
  });
});

// End to end: real executions on a worker, the real fan-out, a webhook receiver, an SMTP server, a chat hook.

/** A workflow whose one API block calls the backend: it fails while the backend answers 500 (D16). */
async function saveBackendWorkflow(backendUrl: string): Promise<string> {
  const id = newId("wf");
  const now = Date.now();
  await store.workflows.createWorkflow({
    id,
    workspaceId: alice.workspaceId,
    folderId: null,
    name: "Nightly export",
    description: "",
    version: 1,
    state: {
      blocks: {
        start: { type: "starter", name: "Start", config: {}, enabled: true },
        api: { type: "api", name: "API", config: { url: backendUrl, method: "GET" }, enabled: true },
      },
      edges: [{ source: "start", target: "api" }],
      loops: {},
      parallels: {},
    },
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

async function receiver(status = 200) {
  const started = await startReceiver((_, response) => sendJson(response, status, { ok: status < 300 }));
  receivers.push(started);
  return started;
}

/** Runs the workflow to its end, then waits for its fan-out: every delivery it made has been attempted. */
async function execute(workflowId: string): Promise<{ logId: string; deliveries: number }> {
  const { logId } = await runToEnd(temporal, alice, workflowId, { taskQueue });
  const deliveries = await fanOutDeliveries(temporal, flowlog.store, logId);
  return { logId, deliveries };
}

async function subscriptionOf(id: string) {
  const response = await restWithKey(
    flowlog.server.url,
    alice.key,
    "GET",
    `/api/v1/workspaces/${alice.workspaceId}/notifications/${id}`,
  );
  expect(response.status, response.text).toBe(200);
  return (response.json as { subscription: { alertStates: Record<string, unknown>[] } }).subscription;
}

describe("workflow.alert.resolved through every channel (D34, D19, D20)", () => {
  it("a webhook, an e-mail and a chat subscription each get one resolution after their alert, and no second", async () => {
    const firedBefore = await alertsCounted("consecutive_failures", "fired");
    const resolvedBefore = await alertsCounted("consecutive_failures", "resolved");
    let backendStatus = 500;
    const backend = await startReceiver((_, response) => sendJson(response, backendStatus, {}));
    receivers.push(backend);
    const workflowId = await saveBackendWorkflow(`${backend.origin}/export`);
    const hook = await receiver();
    const chat = await receiver();
    const secret = "whsec_alert_recovery_test";
    const rule: AlertRuleRecord = { rule: "consecutive_failures", threshold: 2, windowHours: null };
    const subscribeTo = (config: ChannelConfigInput, extra = {}) =>
      subscribe(store, alice.workspaceId, config, {
        allWorkflows: false,
        workflowIds: [workflowId],
        alertRule: rule,
        ...extra,
      });
    const webhookId = await subscribeTo({ channel: "webhook", url: hook.origin }, { secret });
    await subscribeTo({ channel: "email", recipients: ["ops@example.test"] });
    await subscribeTo({ channel: "slack", url: chat.origin });
    const mailsBefore = smtp.received.length;

    await execute(workflowId);
    expect((await execute(workflowId)).deliveries).toBe(3);
    const [firing] = (await subscriptionOf(webhookId)).alertStates;
    expect(firing).toMatchObject({ workflowId, status: "firing" });
    expect(firing).not.toHaveProperty("resolvedAt");
    expect(firing).not.toHaveProperty("resolutionReason");

    backendStatus = 200;
    const recovered = await execute(workflowId);
    expect(recovered.deliveries).toBe(3);
    await untilTrue(() => hook.received.length === 2 && chat.received.length === 2, 15_000);
    const mails = await smtp.waitForMessages(mailsBefore + 2);

    // The webhook: the same envelope, headers and signature as every event (D19).
    const [alerted, resolved] = hook.received;
    const alert = JSON.parse(alerted?.body ?? "") as CompletionEvent;
    const event = JSON.parse(resolved?.body ?? "") as AlertResolvedEvent;
    expect(resolved?.headers["service-event"]).toBe("workflow.alert.resolved");
    expect(resolved?.headers["idempotency-key"]).toBe(resolved?.headers["service-delivery-id"]);
    expect(verifyWebhook({ secret, body: resolved?.body ?? "", headers: resolved?.headers ?? {} })).toBe(
      true,
    );
    expect(event).toMatchObject({
      type: "workflow.alert.resolved",
      data: {
        workflowId,
        workflowName: "Nightly export",
        alert: {
          rule: "consecutive_failures",
          reason: alert.data.alert?.reason,
          firedAt: alert.data.alert?.firedAt,
          eventId: alert.id,
        },
        resolution: {
          reason: expect.stringMatching(/^An execution succeeded/),
          resolvedAt: expect.stringMatching(isoMs),
          logId: recovered.logId,
        },
      },
    });

    // The e-mail and the chat message lead with "Resolved:" and the reason (D20's "Alert:" for a firing).
    const title = `Resolved: Nightly export - ${event.data.resolution.reason}`;
    const mail = mails.at(-1);
    expect(mails.slice(mailsBefore).map((m) => m.parsed.subject)).toEqual([
      `Alert: Nightly export - ${alert.data.alert?.reason}`,
      title,
    ]);
    expect(mail?.parsed.text).toContain(alert.id);
    expect(mail?.parsed.text).toContain(alert.data.alert?.firedAt);
    const message = JSON.parse(chat.received[1]?.body ?? "") as SlackMessage;
    expect(message.blocks[0]).toMatchObject({ text: { text: title } });
    expect(message.attachments[0]?.color).toBe("good");

    // One firing and one resolution counted per subscription.
    expect(await alertsCounted("consecutive_failures", "fired")).toBe(firedBefore + 3);
    expect(await alertsCounted("consecutive_failures", "resolved")).toBe(resolvedBefore + 3);

    // The subscription shows the firing as resolved, with when and why.
    expect((await subscriptionOf(webhookId)).alertStates).toEqual([
      {
        workflowId,
        rule: "consecutive_failures",
        lastFiredAt: alert.data.alert?.firedAt,
        reason: alert.data.alert?.reason,
        status: "resolved",
        resolvedAt: event.data.resolution.resolvedAt,
        resolutionReason: event.data.resolution.reason,
      },
    ]);

    // Another success: nothing is open, so nothing is sent, and no fan-out workflow is started (issue 12).
    const quiet = await execute(workflowId);
    expect(quiet.deliveries).toBe(0);
    await expect(temporal.workflow.getHandle(fanOutWorkflowId(quiet.logId)).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    expect(hook.received).toHaveLength(2);
    expect(chat.received).toHaveLength(2);
  });
});
