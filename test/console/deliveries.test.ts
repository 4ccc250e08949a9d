import { randomUUID } from "node:crypto";
import type { Browser, Page } from "playwright-core";
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
  startFlowlog,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "../support/flowlog.js";
import { type HttpReceiver, receiversClosedAfterAll, sendJson } from "../support/http-receiver.js";
import { untilApi } from "../support/until.js";

/**
 * Issue 17, the delivery log: real executions on a worker on the run's Temporal dev server deliver to real
 * HTTP receivers on loopback; the console's delivery pages are compared with what the API answers for the
 * same delivery, and Redeliver with what the receiver gets.
 */
const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `console-deliveries-${randomUUID()}`;
const receiver = receiversClosedAfterAll();

let flowlog: TestFlowlog;
let worker: RunningWorker;
let account: TestAccount;
let browser: Browser;
let workflowId: string;

beforeAll(async () => {
  flowlog = await startFlowlog({ taskQueue });
  worker = await startWorker(
    temporalServer,
    // D19's delays divided by 50, so a delivery's retries take seconds.
    notifyingDeps(flowlog.store, { delivery: { delayScale: 0.02 } }),
    taskQueue,
  );
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

interface DeliveryJson {
  id: string;
  subscriptionId: string;
  eventId: string;
  logId?: string;
  status: string;
  attemptCount: number;
  lastError?: string;
}

interface AttemptJson {
  series: number;
  attempt: number;
  startedAt: string;
  durationMs: number;
  outcome: string;
  httpStatus?: number;
  responseSnippet?: string;
  error?: string;
}

const get = async <T>(path: string): Promise<T> =>
  (await restWithKey(flowlog.server.url, account.key, "GET", path)).json as T;

async function listed(query = ""): Promise<DeliveryJson[]> {
  const path = `/api/v1/workspaces/${account.workspaceId}/deliveries${query}`;
  return (await get<{ deliveries: DeliveryJson[] }>(path)).deliveries;
}

async function subscribe(hook: HttpReceiver): Promise<string> {
  const response = await restWithKey(
    flowlog.server.url,
    account.key,
    "POST",
    `/api/v1/workspaces/${account.workspaceId}/notifications`,
    { channel: "webhook", webhook: { url: hook.origin }, allWorkflows: true },
  );
  expect(response.status, response.text).toBe(200);
  return (response.json as { subscription: { id: string } }).subscription.id;
}

/** Runs the workflow through the public API; returns its execution id. */
async function execute(): Promise<string> {
  const workflows = clientWithKey(WorkflowsService, flowlog.server.url, account.key);
  return (await workflows.executeWorkflow({ id: workflowId })).executionId;
}

/** The subscription's one delivery once it has settled, succeeded or failed. */
function settled(subscriptionId: string): Promise<DeliveryJson> {
  return untilApi(`a settled delivery of ${subscriptionId}`, async () =>
    (await listed(`?subscriptionId=${subscriptionId}`)).find((delivery) => delivery.status !== "pending"),
  );
}

async function openPage(path: string) {
  const opened = await openSignedIn(browser, flowlog.server.url, account);
  await opened.page.goto(`${flowlog.server.url}/#/${path}`);
  return opened;
}

/** The delivery ids the log shows, in its order: each row's link to its delivery. */
async function shownIds(page: Page): Promise<string[]> {
  const hrefs = await page
    .locator("table.deliveries tbody tr td:first-child a")
    .evaluateAll((links) => links.map((link) => link.getAttribute("href") ?? ""));
  return hrefs.map((href) => decodeURIComponent(/#\/deliveries\/([^?]+)/.exec(href)?.[1] ?? ""));
}

/** The attempts table as the API's fields: series, attempt, startedAt, outcome, HTTP status, snippet, error. */
async function shownAttempts(page: Page) {
  return await page.locator("table.attempts tbody tr").evaluateAll((rows) =>
    rows.map((row) => {
      const cells = [...row.querySelectorAll("td")].map((cell) => cell.textContent ?? "");
      return {
        series: Number(cells[0]),
        attempt: Number(cells[1]),
        startedAt: row.querySelector("time")?.getAttribute("datetime"),
        outcome: cells[4],
        httpStatus: cells[5] === "–" ? undefined : Number(cells[5]),
        responseSnippet: cells[6] === "–" ? undefined : cells[6],
        error: cells[7] === "–" ? undefined : cells[7],
      };
    }),
  );
}

const asShown = (attempts: AttemptJson[]) =>
  attempts.map(({ series, attempt, startedAt, outcome, httpStatus, responseSnippet, error }) => ({
    series,
    attempt,
    startedAt,
    outcome,
    httpStatus,
    responseSnippet,
    error,
  }));

describe("the delivery log", () => {
  it("opens a delivery with every attempt as the API reads it, and redelivers it with the same Idempotency-Key", async () => {
    // Two 503s, retried, then acknowledged (D19): three attempts in the first series.
    const hook = await receiver((_, response, index) =>
      index < 2 ? sendJson(response, 503, { busy: true }) : sendJson(response, 200, { received: index + 1 }),
    );
    const subscriptionId = await subscribe(hook);
    const executionId = await execute();
    const delivery = await settled(subscriptionId);
    expect(delivery).toMatchObject({ status: "succeeded", attemptCount: 3 });

    const { page, problems } = await openPage(`deliveries?ws=${account.workspaceId}`);
    await expect.poll(() => shownIds(page)).toEqual((await listed()).map((d) => d.id));
    const row = page.locator("table.deliveries tbody tr", { has: page.locator(`a[href*="${delivery.id}"]`) });
    await expect
      .poll(() => row.locator("td").allTextContents())
      .toEqual([
        expect.any(String),
        "succeeded",
        "workflow.execution.completed",
        `Webhook ${hook.origin}`,
        "3",
        "–",
        "200",
        delivery.logId,
      ]);

    await row.locator("td:first-child a").click();
    await page.getByRole("heading", { name: `Delivery ${delivery.id}` }).waitFor();
    const detail = () => get<{ attempts: AttemptJson[] }>(`/api/v1/deliveries/${delivery.id}`);
    const first = (await detail()).attempts;
    expect(first.map((a) => [a.outcome, a.httpStatus])).toEqual([
      ["retrying", 503],
      ["retrying", 503],
      ["succeeded", 200],
    ]);
    await expect.poll(() => shownAttempts(page)).toEqual(asShown(first));
    const execution = page.getByRole("link", { name: executionId });
    expect(await execution.getAttribute("href")).toBe(
      `#/logs?ws=${account.workspaceId}&execution=${executionId}`,
    );

    await page.getByRole("button", { name: "Redeliver" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("series 2");
    await expect.poll(() => hook.received.length).toBe(4);
    const keys = hook.received.map((request) => request.headers["idempotency-key"]);
    expect(new Set(keys)).toEqual(new Set([delivery.id]));
    expect(new Set(hook.received.map((request) => JSON.parse(request.body).id))).toEqual(
      new Set([delivery.eventId]),
    );

    // The page reads the delivery again until the new series has settled, then shows it like the API.
    await expect.poll(() => shownAttempts(page).then((shown) => shown.length)).toBe(4);
    const after = await detail();
    expect(after.attempts.at(-1)).toMatchObject({
      series: 2,
      attempt: 1,
      outcome: "succeeded",
      httpStatus: 200,
    });
    await expect.poll(() => shownAttempts(page)).toEqual(asShown(after.attempts));
    await expect.poll(() => page.locator("dl.facts").textContent()).toContain("succeeded");
    await screenshot(page, "delivery");
    expect(problems).toEqual([]);
  });

  it("filters by status and subscription through the API, in a URL that opens the same view", async () => {
    const refusing = await receiver((_, response) => sendJson(response, 410, { gone: true }));
    const refused = await subscribe(refusing);
    await execute();
    const failed = await settled(refused);
    expect(failed).toMatchObject({
      status: "failed",
      attemptCount: 1,
      lastError: expect.stringMatching(/410/),
    });

    const { page, problems } = await openPage(`deliveries?ws=${account.workspaceId}`);
    await expect.poll(() => shownIds(page)).toEqual((await listed()).map((d) => d.id));
    await screenshot(page, "deliveries");
    await page.getByLabel(/^Status/).selectOption("failed");
    await page.getByRole("button", { name: "Apply filters" }).click();
    const failures = await listed("?status=failed");
    expect(failures.map((d) => d.id)).toContain(failed.id);
    await expect.poll(() => shownIds(page)).toEqual(failures.map((d) => d.id));
    const shared = page.url();
    expect(new URL(shared).hash).toContain("status=failed");

    await page.getByLabel(/^Status/).selectOption("");
    await page.getByLabel("Subscription").selectOption({ label: `Webhook ${refusing.origin}` });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => shownIds(page)).toEqual([failed.id]);
    await expect
      .poll(() => page.locator("table.deliveries tbody tr td").nth(5).textContent())
      .toBe(failed.lastError);

    const other = await openSignedIn(browser, flowlog.server.url, account);
    await other.page.goto(shared);
    await expect.poll(() => shownIds(other.page)).toEqual(failures.map((d) => d.id));
    await expect.poll(() => other.page.getByLabel(/^Status/).inputValue()).toBe("failed");
    expect([...problems, ...other.problems]).toEqual([]);
  });

  it("pages older deliveries by cursor, and filters by held, event type, HTTP status class and dates, in the URL (D40)", async () => {
    // Seven deliveries of a subscription no execution reaches, a minute apart, written as the worker does.
    const subscriptionId = await subscribeWebhook(
      flowlog.store,
      account.workspaceId,
      "https://hooks.test/log",
      {
        allWorkflows: false,
      },
    );
    const base = Date.parse("2026-11-02T09:00:00.000Z");
    const histories: [string, number | null | "held"][] = [
      ["workflow.execution.completed", 204],
      ["workflow.alert.fired", 503],
      ["workflow.execution.completed", 503],
      ["workflow.execution.completed", "held"],
      ["workflow.execution.completed", null],
      ["workflow.execution.completed", "held"],
      ["workflow.alert.fired", 204],
    ];
    for (const [minute, [eventType, history]] of histories.entries()) {
      const eventId = newId("evt");
      const { id } = await flowlog.store.deliveries.createOnce({
        id: newId("dlv"),
        eventId,
        eventType,
        subscriptionId,
        workspaceId: account.workspaceId,
        logId: null,
        event: { id: eventId, type: eventType },
        createdAt: base + minute * 60_000,
      });
      if (history === "held") {
        await flowlog.sql("UPDATE deliveries SET status = 'held' WHERE id = @id", { id });
        continue;
      }
      const delivered = history === 204;
      await flowlog.store.deliveries.recordAttempt(
        {
          deliveryId: id,
          series: 1,
          attempt: 1,
          startedAt: base + minute * 60_000 + 1_000,
          durationMs: 5,
          outcome: delivered ? "succeeded" : "failed",
          httpStatus: history,
          responseSnippet: null,
          error: delivered ? null : "the receiver failed",
        },
        delivered ? "succeeded" : "failed",
      );
    }
    const of = `?subscriptionId=${subscriptionId}&limit=3`;
    const pageOf = async (query: string) =>
      await get<{ deliveries: DeliveryJson[]; nextCursor?: string }>(
        `/api/v1/workspaces/${account.workspaceId}/deliveries${query}`,
      );
    const first = await pageOf(of);
    const second = await pageOf(`${of}&cursor=${first.nextCursor}`);
    const third = await pageOf(`${of}&cursor=${second.nextCursor}`);
    expect(third).not.toHaveProperty("nextCursor");
    const ids = (page: { deliveries: DeliveryJson[] }) => page.deliveries.map((d) => d.id);
    expect([...ids(first), ...ids(second), ...ids(third)]).toHaveLength(7);

    const { page, problems } = await openPage(
      `deliveries?ws=${account.workspaceId}&subscription=${subscriptionId}&limit=3`,
    );
    const pager = page.getByRole("navigation", { name: "More deliveries" });
    await expect.poll(() => shownIds(page)).toEqual(ids(first));
    await pager.getByRole("button", { name: "Older" }).click();
    await expect.poll(() => shownIds(page)).toEqual(ids(second));
    await pager.getByRole("button", { name: "Older" }).click();
    await expect.poll(() => shownIds(page)).toEqual(ids(third));
    expect(await pager.getByRole("button", { name: "Older" }).isDisabled()).toBe(true);
    await pager.getByRole("button", { name: "Newer" }).click();
    await expect.poll(() => shownIds(page)).toEqual(ids(second));
    await pager.getByRole("button", { name: "Newest" }).click();
    await expect.poll(() => shownIds(page)).toEqual(ids(first));

    // Each filter through the form, shown as the API answers it, and kept in the URL with the page size.
    const applied = async (query: string) => {
      await page.getByRole("button", { name: "Apply filters" }).click();
      const expected = ids(await pageOf(`${of}&${query}`));
      expect(expected.length).toBeGreaterThan(0);
      await expect.poll(() => shownIds(page)).toEqual(expected);
      return new URL(page.url()).hash;
    };
    await page.getByLabel(/^Status/).selectOption("held");
    expect(await applied("status=held")).toMatch(/status=held.*limit=3|limit=3.*status=held/);
    await page.getByLabel(/^Status/).selectOption("");
    await page.getByLabel("HTTP status").selectOption("5xx");
    expect(await applied("httpStatusClass=5xx")).toContain("class=5xx");
    await page.getByLabel("Event type").fill("workflow.alert.fired");
    expect(await applied("httpStatusClass=5xx&eventType=workflow.alert.fired")).toContain(
      "type=workflow.alert.fired",
    );
    await page.getByLabel("HTTP status").selectOption("none");
    await page.getByLabel("Event type").fill("");
    // The browser's local time, as the field takes it: the second to the fifth delivery's minutes.
    const local = (ms: number) =>
      page.evaluate((at) => {
        const date = new Date(at);
        return new Date(at - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
      }, ms);
    await page.getByLabel("Created from").fill(await local(base + 60_000));
    await page.getByLabel("Created before").fill(await local(base + 4 * 60_000));
    const from = new Date(base + 60_000).toISOString();
    const to = new Date(base + 4 * 60_000).toISOString();
    const dated = await applied(`httpStatusClass=none&startDate=${from}&endDate=${to}`);
    expect(decodeURIComponent(dated)).toContain(`from=${from}`);
    expect(decodeURIComponent(dated)).toContain(`to=${to}`);

    // The URL opens the same view elsewhere.
    const other = await openSignedIn(browser, flowlog.server.url, account);
    await other.page.goto(page.url());
    await expect.poll(() => shownIds(other.page)).toEqual(await shownIds(page));
    await expect.poll(() => other.page.getByLabel("HTTP status").inputValue()).toBe("none");
    expect([...problems, ...other.problems]).toEqual([]);
  });

  it("shows a delivery's newest 100 attempts, and its older ones a page further (D40)", async () => {
    const subscriptionId = await subscribeWebhook(
      flowlog.store,
      account.workspaceId,
      "https://hooks.test/many",
      {
        allWorkflows: false,
      },
    );
    const eventId = newId("evt");
    const { id } = await flowlog.store.deliveries.createOnce({
      id: newId("dlv"),
      eventId,
      eventType: "workflow.execution.completed",
      subscriptionId,
      workspaceId: account.workspaceId,
      logId: null,
      event: { id: eventId, type: "workflow.execution.completed" },
      createdAt: Date.now(),
    });
    // 21 series of 5 failed attempts: the first delivery and its 20 redeliveries.
    for (let series = 1; series <= 21; series++) {
      for (let attempt = 1; attempt <= 5; attempt++) {
        const last = attempt === 5;
        await flowlog.store.deliveries.recordAttempt(
          {
            deliveryId: id,
            series,
            attempt,
            startedAt: Date.now(),
            durationMs: 3,
            outcome: last ? "failed" : "retrying",
            httpStatus: 503,
            responseSnippet: null,
            error: "HTTP 503",
          },
          last ? "failed" : "pending",
        );
      }
    }
    type Attempts = { attempts: AttemptJson[]; nextAttemptsCursor?: string };
    const newest = await get<Attempts>(`/api/v1/deliveries/${id}`);
    const older = await get<Attempts>(`/api/v1/deliveries/${id}?attemptsCursor=${newest.nextAttemptsCursor}`);
    expect([newest.attempts.length, older.attempts.length]).toEqual([100, 5]);

    const { page, problems } = await openPage(`deliveries/${id}?ws=${account.workspaceId}`);
    const pager = page.getByRole("navigation", { name: "More attempts" });
    await expect.poll(() => shownAttempts(page)).toEqual(asShown(newest.attempts));
    await pager.getByRole("button", { name: "Older" }).click();
    await expect.poll(() => shownAttempts(page)).toEqual(asShown(older.attempts));
    expect(await pager.getByRole("button", { name: "Older" }).isDisabled()).toBe(true);
    await pager.getByRole("button", { name: "Newest" }).click();
    await expect.poll(() => shownAttempts(page)).toEqual(asShown(newest.attempts));
    expect(problems).toEqual([]);
  });

  it("says what the API refuses, naming the field", async () => {
    const { page } = await openPage(`deliveries?ws=${account.workspaceId}&limit=0`);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("limit");
  });
});
