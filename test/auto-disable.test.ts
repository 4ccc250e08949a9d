import { randomUUID } from "node:crypto";
import { Client, Connection, WorkflowNotFoundError } from "@temporalio/client";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/config.js";
import {
  type AutoDisablePolicy,
  defaultAutoDisablePolicy,
  nextAutoDisableStep,
} from "../src/domain/auto-disable.js";
import type { ActivityDeps } from "../src/temporal/activities/index.js";
import { fanOutWorkflowId } from "../src/temporal/delivery-ids.js";
import { endpointWatchId } from "../src/temporal/endpoint-health-ids.js";
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
import { isoMs } from "./support/formats.js";
import { type HttpReceiver, receiversClosedAfterAll, sendJson } from "./support/http-receiver.js";
import { type ReceivedMail, type SmtpServer, startSmtpServer } from "./support/smtp-server.js";
import { until } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

/**
 * Days are involved, so the worker that applies D35's real figures (5 days, 24 h, 20 failures) judges by
 * this clock: real time moved on by `offsetMs`. Each failure it records wakes the endpoint's watcher, which
 * then looks at the run by the same clock.
 */
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;
const daysQueue = `auto-disable-days-${randomUUID()}`;

/** A second worker with the figures shrunk to seconds and the real clock: only its durable timer acts. */
const quickPolicy: AutoDisablePolicy = { failingForMs: 8_000, noticeMs: 4_000, minFailures: 3 };
const quickQueue = `auto-disable-quick-${randomUUID()}`;

let flowlog: TestFlowlog;
let smtp: SmtpServer;
let workers: RunningWorker[] = [];
let connection: Connection;
let temporal: Client;
const receiver = receiversClosedAfterAll();

/** The operator log, as pino writes it, line by line. */
const operatorLines: Array<Record<string, unknown> & { msg: string }> = [];
const operatorLog = pino(
  { level: "info" },
  { write: (line: string) => operatorLines.push(JSON.parse(line)) },
);

function workerDeps(autoDisable: AutoDisablePolicy, workerClock: () => number): ActivityDeps {
  return notifyingDeps(
    flowlog.store,
    { smtpUrl: smtp.url, autoDisable },
    { clock: workerClock, logger: operatorLog },
  );
}

beforeAll(async () => {
  smtp = await startSmtpServer({ user: "flowlog", password: "smtp-password", replies: {} });
  flowlog = await startFlowlog({ taskQueue: daysQueue, clock });
  workers = [
    await startWorker(temporalServer, workerDeps(defaultAutoDisablePolicy, clock), daysQueue),
    await startWorker(temporalServer, workerDeps(quickPolicy, Date.now), quickQueue),
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

type Json = Record<string, unknown>;
type SubscriptionJson = Json & { active: boolean };

/** A workspace of its own, with an e-mail subscription that hears only D35's notices. */
async function workspaceWithMailbox(): Promise<{
  account: TestAccount;
  mailbox: string;
  workflowId: string;
}> {
  const account = await createAccount(flowlog.store);
  const mailbox = `ops-${randomUUID()}@example.test`;
  // The test's executions all succeed: this subscription gets no completion e-mail of its own.
  await subscribe(
    flowlog.store,
    account.workspaceId,
    { channel: "email", recipients: [mailbox] },
    { levelFilter: ["error"] },
  );
  return { account, mailbox, workflowId: await saveWorkflow(account) };
}

/** A workflow that runs without any network: starter, then a response block. */
async function saveWorkflow(account: TestAccount): Promise<string> {
  return await createWorkflow(
    flowlog.store,
    account.workspaceId,
    "Auto-disable test",
    null,
    offlineWorkflowState,
  );
}

/** A receiver answering `status.code` (410 Gone unless a test changes it): a failure that is not retried. */
async function endpoint(): Promise<HttpReceiver & { status: { code: number } }> {
  const status = { code: 410 };
  const started = await receiver((_, response) => sendJson(response, status.code, { status: status.code }));
  return Object.assign(started, { status });
}

const settledCount = async (account: TestAccount, subscriptionId: string) =>
  (await flowlog.store.deliveries.list({ workspaceId: account.workspaceId, subscriptionId }, 1000)).filter(
    (delivery) => delivery.status !== "pending",
  ).length;

function execute(
  { account, workflowId }: { account: TestAccount; workflowId: string },
  taskQueue = daysQueue,
) {
  return runToEnd(temporal, account, workflowId, { taskQueue });
}

/** `count` executions at once, each settling one delivery to the subscription (D19: 410 fails at once). */
async function deliveries(
  count: number,
  { account, workflowId }: { account: TestAccount; workflowId: string },
  subscriptionId: string,
  taskQueue = daysQueue,
): Promise<void> {
  const before = await settledCount(account, subscriptionId);
  await Promise.all(Array.from({ length: count }, () => execute({ account, workflowId }, taskQueue)));
  await until(`${count} more settled deliveries`, async () =>
    (await settledCount(account, subscriptionId)) >= before + count ? true : undefined,
  );
}

const mailsTo = (mailbox: string) => smtp.received.filter((mail) => mail.rcptTo.includes(mailbox));
const mailNumber = (mailbox: string, n: number): Promise<ReceivedMail> =>
  until(`e-mail ${n} to ${mailbox}`, () => mailsTo(mailbox)[n - 1]);

const linesAbout = (subscriptionId: string) =>
  operatorLines.filter((line) => line.subscriptionId === subscriptionId);

async function read(account: TestAccount, id: string): Promise<SubscriptionJson> {
  const response = await restWithKey(
    flowlog.server.url,
    account.key,
    "GET",
    `/api/v1/workspaces/${account.workspaceId}/notifications/${id}`,
  );
  expect(response.status, response.text).toBe(200);
  return (response.json as { subscription: SubscriptionJson }).subscription;
}

async function patch(account: TestAccount, id: string, body: Json): Promise<SubscriptionJson> {
  const response = await restWithKey(
    flowlog.server.url,
    account.key,
    "PATCH",
    `/api/v1/workspaces/${account.workspaceId}/notifications/${id}`,
    body,
  );
  expect(response.status, response.text).toBe(200);
  return (response.json as { subscription: SubscriptionJson }).subscription;
}

const isActive = async (id: string) => (await flowlog.store.notifications.get(id))?.active;

/**
 * Before the test moves its clock on: the endpoint's watcher has had every failure signalled (one signal
 * per counted failure), has looked at the run after the last of them, and sleeps on its timer. Moving the
 * clock while it is still looking would let it act on the later time before the failure the test sends
 * next.
 */
async function watcherAsleep(subscriptionId: string): Promise<void> {
  const handle = temporal.workflow.getHandle(endpointWatchId(subscriptionId));
  const failures = (await flowlog.store.endpointHealth.get(subscriptionId))?.run?.failedDeliveries;
  await expect
    .poll(
      async () => {
        const events = (await handle.fetchHistory()).events ?? [];
        const signals = events.filter((event) => event.workflowExecutionSignaledEventAttributes).length;
        const lastSignal = events.findLastIndex((event) => event.workflowExecutionSignaledEventAttributes);
        const later = events.slice(lastSignal + 1);
        const looked = later.filter(
          (event) => event.timerStartedEventAttributes || event.activityTaskScheduledEventAttributes,
        );
        return signals === failures && Boolean(looked.at(-1)?.timerStartedEventAttributes);
      },
      { timeout: 15_000, interval: 50 },
    )
    .toBe(true);
}

/** Moves the days worker's clock to `ms` after `start`, once the watcher sleeps. */
async function moveClock(subscriptionId: string, start: number, ms: number): Promise<void> {
  await watcherAsleep(subscriptionId);
  offsetMs = start + ms;
}

describe("D35 auto-disable: the delivery outcome path, days on the injected clock", () => {
  it("20 failures over 4 days bring a notice naming the endpoint and its last error; at 5 days the endpoint is disabled, and enabling starts afresh", async () => {
    const workspace = await workspaceWithMailbox();
    const { account, mailbox } = workspace;
    const hook = await endpoint();
    const tokenInUrl = `tok_${randomUUID()}`;
    const id = await subscribeWebhook(
      flowlog.store,
      account.workspaceId,
      `${hook.origin}/hooks?token=${tokenInUrl}`,
    );
    const start = offsetMs;

    await deliveries(19, workspace, id);
    const failing = await read(account, id);
    expect(failing).toMatchObject({
      active: true,
      failingSince: expect.stringMatching(isoMs),
      failedDeliveries: 19,
    });
    expect(failing).not.toHaveProperty("disabledReason");

    await moveClock(id, start, 4 * dayMs + 60_000);
    await deliveries(1, workspace, id);
    const notice = await mailNumber(mailbox, 1);
    const endpointLabel = `${hook.origin}/hooks`;
    expect(notice.parsed.subject).toMatch(
      new RegExp(`^Endpoint failing: ${endpointLabel.replaceAll(".", "\\.")} will be disabled at \\d{4}-`),
    );
    for (const part of [notice.parsed.text ?? "", notice.parsed.html ?? ""]) {
      expect(part).toContain(endpointLabel);
      expect(part).toContain("receiver answered 410 Gone");
      expect(part).toContain("20");
      expect(part).not.toContain(tokenInUrl);
    }
    expect(await isActive(id)).toBe(true);
    const [warned] = linesAbout(id);
    expect(warned).toMatchObject({ level: 40, endpoint: endpointLabel, failedDeliveries: 20 });
    expect(warned?.msg).toContain("will be disabled");
    expect(warned?.lastError).toContain("410");

    await until("the notice's delivery", async () =>
      (
        await flowlog.store.deliveries.list({ workspaceId: account.workspaceId, status: "succeeded" }, 10)
      ).find((delivery) => delivery.eventType === "notification.endpoint.failing"),
    );
    await moveClock(id, start, 5 * dayMs + 120_000);
    await deliveries(1, workspace, id);
    await until("the disable", async () => ((await isActive(id)) === false ? true : undefined));
    const disabledMail = await mailNumber(mailbox, 2);
    expect(disabledMail.parsed.subject).toBe(`Endpoint disabled: ${endpointLabel}`);
    expect(disabledMail.parsed.text).toContain("receiver answered 410 Gone");
    const disabled = await read(account, id);
    expect(disabled).toMatchObject({
      active: false,
      disabledAt: expect.stringMatching(isoMs),
      failedDeliveries: 21,
    });
    expect(disabled.disabledReason).toMatch(
      /^every delivery since .* failed \(21 failed deliveries\); the last: receiver answered 410 Gone/,
    );
    const lines = linesAbout(id);
    expect(lines).toHaveLength(2);
    expect(lines[1]?.msg).toContain("was disabled");
    expect(JSON.stringify(lines)).not.toContain(tokenInUrl);

    // Disabled, it gets nothing more: the next execution's fan-out makes no delivery at all.
    const { logId } = await execute(workspace);
    await expect(temporal.workflow.getHandle(fanOutWorkflowId(logId)).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    expect(hook.received).toHaveLength(21);

    const enabled = await restWithKey(
      flowlog.server.url,
      account.key,
      "POST",
      `/api/v1/workspaces/${account.workspaceId}/notifications/${id}:enable`,
      {},
    );
    expect(enabled.status, enabled.text).toBe(200);
    const fresh = (enabled.json as { subscription: SubscriptionJson }).subscription;
    expect(fresh.active).toBe(true);
    for (const field of ["disabledReason", "disabledAt", "failingSince", "failedDeliveries"]) {
      expect(fresh).not.toHaveProperty(field);
    }
  });

  it("fewer than 20 failures disable nothing, and a late 20th brings the notice first: the disable waits a full 24 h after it", async () => {
    const workspace = await workspaceWithMailbox();
    const { account, mailbox } = workspace;
    const hook = await endpoint();
    const id = await subscribeWebhook(flowlog.store, account.workspaceId, `${hook.origin}/hooks`);
    const start = offsetMs;

    await deliveries(5, workspace, id);
    await moveClock(id, start, 6 * dayMs);
    await deliveries(1, workspace, id);
    expect(await read(account, id)).toMatchObject({ active: true, failedDeliveries: 6 });
    await watcherAsleep(id);
    expect(mailsTo(mailbox)).toHaveLength(0);

    await deliveries(14, workspace, id);
    const notice = await mailNumber(mailbox, 1);
    expect(notice.parsed.subject).toMatch(/^Endpoint failing: /);
    expect(await isActive(id)).toBe(true);

    await until("the notice's delivery", async () =>
      (
        await flowlog.store.deliveries.list({ workspaceId: account.workspaceId, status: "succeeded" }, 10)
      ).find((delivery) => delivery.eventType === "notification.endpoint.failing"),
    );
    await moveClock(id, start, 6 * dayMs + 23 * hourMs);
    await deliveries(1, workspace, id);
    expect(await isActive(id)).toBe(true);
    expect(mailsTo(mailbox)).toHaveLength(1);

    await moveClock(id, start, 7 * dayMs + 120_000);
    await deliveries(1, workspace, id);
    await until("the disable", async () => ((await isActive(id)) === false ? true : undefined));
    expect((await mailNumber(mailbox, 2)).parsed.subject).toMatch(/^Endpoint disabled: /);

    // An update that turns it on again is an enable too.
    const patched = await patch(account, id, { active: true });
    expect(patched.active).toBe(true);
    for (const field of ["disabledReason", "disabledAt", "failingSince", "failedDeliveries"]) {
      expect(patched).not.toHaveProperty(field);
    }
  });

  it("any successful delivery resets the run", async () => {
    const workspace = await workspaceWithMailbox();
    const { account } = workspace;
    const hook = await endpoint();
    const id = await subscribeWebhook(flowlog.store, account.workspaceId, `${hook.origin}/hooks`);

    await deliveries(3, workspace, id);
    expect(await read(account, id)).toMatchObject({ failedDeliveries: 3 });
    // Changing a setting of a subscription that stays on is no enable: the run goes on.
    expect(await patch(account, id, { includeFinalOutput: true })).toMatchObject({ failedDeliveries: 3 });
    hook.status.code = 204;
    await deliveries(1, workspace, id);
    const recovered = await read(account, id);
    expect(recovered).not.toHaveProperty("failingSince");
    expect(recovered).not.toHaveProperty("failedDeliveries");
    expect((await flowlog.store.endpointHealth.get(id))?.run).toBeNull();
  });

  it("an e-mail subscription's failures are never counted: it is where the notices go", async () => {
    const workspace = await workspaceWithMailbox();
    const { account } = workspace;
    // More recipients than D20 allows: every delivery fails at once, before any SMTP exchange.
    const recipients = Array.from({ length: 11 }, (_, n) => `r${n}@example.test`);
    const id = await subscribe(flowlog.store, account.workspaceId, { channel: "email", recipients });
    await deliveries(2, workspace, id);
    expect(
      await flowlog.store.deliveries.list({ workspaceId: account.workspaceId, subscriptionId: id }, 10),
    ).toEqual([expect.objectContaining({ status: "failed" }), expect.objectContaining({ status: "failed" })]);
    expect(await read(account, id)).not.toHaveProperty("failingSince");
  });
});

describe("D35 auto-disable: a durable timer handles an endpoint that gets no more traffic", () => {
  it("a chat endpoint that failed and went quiet is noticed, then disabled, by its watcher alone", async () => {
    const workspace = await workspaceWithMailbox();
    const { account, mailbox } = workspace;
    const hook = await endpoint();
    // A chat incoming-webhook URL's path is its credential: neither the notice nor the log may show it.
    const secretPath = `/services/T000/B000/${randomUUID()}`;
    const id = await subscribe(flowlog.store, account.workspaceId, {
      channel: "slack",
      url: `${hook.origin}${secretPath}`,
    });

    await deliveries(3, workspace, id, quickQueue);
    const failingSince = (await flowlog.store.endpointHealth.get(id))?.run?.failingSince as number;
    expect(await isActive(id)).toBe(true);

    const notice = await mailNumber(mailbox, 1);
    const noticedAt = Date.now();
    expect(noticedAt).toBeGreaterThanOrEqual(failingSince + quickPolicy.failingForMs - quickPolicy.noticeMs);
    expect(await isActive(id)).toBe(true);
    expect(notice.parsed.subject).toMatch(
      new RegExp(`^Endpoint failing: ${hook.origin.replaceAll(".", "\\.")}/… `),
    );

    await until("the disable", async () => ((await isActive(id)) === false ? true : undefined));
    expect(Date.now()).toBeGreaterThanOrEqual(failingSince + quickPolicy.failingForMs);
    const disabled = await mailNumber(mailbox, 2);
    expect(disabled.parsed.subject).toMatch(/^Endpoint disabled: /);
    expect(hook.received).toHaveLength(3);

    const everything = JSON.stringify([notice.parsed, disabled.parsed, linesAbout(id)]);
    expect(everything).not.toContain(secretPath);
    expect(linesAbout(id)).toHaveLength(2);

    // One watcher per subscription, under a fixed id; with the endpoint disabled, it has ended.
    const watcher = temporal.workflow.getHandle(endpointWatchId(id));
    await expect
      .poll(async () => (await watcher.describe()).status.name, { timeout: 10_000 })
      .toBe("COMPLETED");
  });
});

describe("D35's figures", () => {
  const policy = defaultAutoDisablePolicy;
  const since = Date.parse("2026-11-01T00:00:00.000Z");
  const run = (failedDeliveries: number, noticedAt: number | null = null) => ({
    failingSince: since,
    failedDeliveries,
    noticedAt,
  });

  it("are 5 days, a notice 24 h before, and 20 failures", () => {
    expect(policy).toEqual({ failingForMs: 5 * dayMs, noticeMs: dayMs, minFailures: 20 });
  });

  it("the notice is due at 4 days with 20 failures counted, not before, and not with 19", () => {
    expect(nextAutoDisableStep(run(20), policy, since + 4 * dayMs - 1)).toEqual({
      kind: "wait",
      until: since + 4 * dayMs,
    });
    expect(nextAutoDisableStep(run(20), policy, since + 4 * dayMs)).toEqual({ kind: "notice" });
    expect(nextAutoDisableStep(run(19), policy, since + 9 * dayMs)).toEqual({ kind: "wait", until: null });
  });

  it("the disable is due at 5 days, and never sooner than 24 h after the notice", () => {
    const noticedOnTime = run(20, since + 4 * dayMs);
    expect(nextAutoDisableStep(noticedOnTime, policy, since + 5 * dayMs - 1)).toMatchObject({ kind: "wait" });
    expect(nextAutoDisableStep(noticedOnTime, policy, since + 5 * dayMs)).toEqual({ kind: "disable" });
    const noticedLate = run(20, since + 6 * dayMs);
    expect(nextAutoDisableStep(noticedLate, policy, since + 6 * dayMs + 1)).toEqual({
      kind: "wait",
      until: since + 7 * dayMs,
    });
  });

  it("FLOWLOG_AUTO_DISABLE changes any of them; a bad value stops the start naming its path", () => {
    expect(loadConfig({}).autoDisable).toEqual(policy);
    expect(
      loadConfig({ FLOWLOG_AUTO_DISABLE: '{"failingHours": 72, "minFailures": 5}' }).autoDisable,
    ).toEqual({
      failingForMs: 72 * hourMs,
      noticeMs: dayMs,
      minFailures: 5,
    });
    const problemsOf = (value: string) => {
      try {
        loadConfig({ FLOWLOG_AUTO_DISABLE: value });
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      return [];
    };
    expect(problemsOf('{"noticeHours": 120}')).toEqual([
      "FLOWLOG_AUTO_DISABLE.noticeHours: noticeHours must be less than failingHours",
    ]);
    expect(problemsOf('{"failingHours": 0}')).toEqual([
      "FLOWLOG_AUTO_DISABLE.failingHours: must be a positive integer",
    ]);
    expect(problemsOf('{"days": 5}')).toEqual([
      expect.stringMatching(/^FLOWLOG_AUTO_DISABLE\.days: unknown/),
    ]);
    expect(problemsOf("5 days")).toEqual(["FLOWLOG_AUTO_DISABLE: must be JSON"]);
  });
});
