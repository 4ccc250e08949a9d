import { randomUUID } from "node:crypto";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { defaultPlanLimits, type PlanTable } from "../../src/limits/plans.js";
import { logIdOf } from "../../src/temporal/activities/execution-activities.js";
import { restWithKey } from "../support/api-server.js";
import { launchBrowser, openSignedIn, screenshot } from "../support/browser.js";
import { type RunningWorker, startWorker, testDeps } from "../support/engine.js";
import { createAccount, startFlowlog, type TestAccount, type TestFlowlog } from "../support/flowlog.js";
import {
  failedPostingRuns,
  type PostingUpstream,
  startPostingUpstream,
} from "../support/posting-workflow.js";
import { until } from "../support/until.js";

/**
 * Issue 54 in the console (D47): retry and cancel on an entry's page, and a bulk retry from a filtered logs
 * view (its preview count, then the job's progress, then its cancel), against a real worker on the shared
 * Temporal dev server. The worker's plan gives one async execution every 20 s after a burst of one, so a
 * bulk job retries one execution and then waits for the bucket: long enough to be seen and cancelled.
 */
const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `console-controls-${randomUUID()}`;
const planLimits: PlanTable = {
  ...defaultPlanLimits,
  enterprise: { ...defaultPlanLimits.enterprise, asyncExecutions: { requestsPerMinute: 3, maxBurst: 1 } },
};

let flowlog: TestFlowlog;
let worker: RunningWorker;
let browser: Browser;
let account: TestAccount;
/** The upstream the workflows' HTTP block calls: 503 on the paths `down`, no answer on the paths `held`. */
let upstream: PostingUpstream;

beforeAll(async () => {
  upstream = await startPostingUpstream();
  flowlog = await startFlowlog({ taskQueue });
  worker = await startWorker(temporalServer, testDeps(flowlog.store, { planLimits }), taskQueue);
  account = await createAccount(flowlog.store);
  browser = await launchBrowser();
});

afterAll(async () => {
  // First: the calls it holds answered, the worker has none left in flight to wait for as it stops.
  await upstream?.close();
  await browser?.close();
  await worker?.stop();
  await flowlog?.close();
});

const _call = (method: string, path: string, body?: unknown) =>
  restWithKey(flowlog.server.url, account.key, method, path, body);

const callsTo = (path: string) => upstream.ordersTo(path).length;

/** A workflow whose HTTP block posts to its own path, run `count` times while the path is down: all failed. */
const failedRuns = (count: number) =>
  failedPostingRuns(flowlog.server.url, flowlog.store, account, upstream, count);

describe("An entry's page: retry and cancel (D47)", () => {
  it("retries the execution from its failed block, then cancels the retry while it runs", async () => {
    const { path, failed } = await failedRuns(1);
    const original = failed[0] as string;
    // The retry's call hangs: it runs until cancelled.
    upstream.held.add(path);
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    await page.goto(`${flowlog.server.url}/#/logs/${logIdOf(original)}?ws=${account.workspaceId}`);

    const retryForm = page.getByRole("form", { name: "Retry the execution" });
    await retryForm.getByLabel("Run from").selectOption("failed_block");
    await retryForm.getByRole("button", { name: "Retry" }).click();
    const started = page.getByRole("status").filter({ hasText: "Retry started" });
    await started.waitFor();
    const retry = (await started.locator("code").first().textContent()) ?? "";
    expect(retry).toMatch(/^ex_/);
    await until("the retry waiting on the upstream", () => callsTo(path) >= 2 || undefined);

    const cancelForm = page.getByRole("form", { name: "Cancel the retry" });
    await cancelForm.getByLabel("Reason (optional)").fill("upstream hangs");
    await cancelForm.getByRole("button", { name: "Cancel the retry" }).click();
    await page.getByText("Cancellation asked").waitFor();
    await screenshot(page, "entry-retry-cancelled");

    await until("the retry logged", () => flowlog.store.logs.getExecution(retry));
    const entry = await flowlog.store.logs.getEntry(logIdOf(retry));
    expect(entry).toMatchObject({
      level: "error",
      finalOutput: { error: "cancelled", reason: "upstream hangs" },
    });
    expect(await flowlog.store.logs.retryLinks(retry)).toMatchObject({ retryOf: original });
    expect(problems).toEqual([]);
  }, 90_000);
});

describe("A filtered logs view: bulk retry (D47)", () => {
  it("previews the count, starts the job, shows its progress and cancels it", async () => {
    const { workflowId, failed } = await failedRuns(3);
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    await page.goto(
      `${flowlog.server.url}/#/logs?ws=${account.workspaceId}&workflows=${workflowId}&level=error`,
    );
    await page.locator("table.logs tbody tr").nth(2).waitFor();

    await page.getByText("Retry the executions of this view").click();
    const form = page.getByRole("form", { name: "Bulk retry" });
    await form.getByRole("button", { name: "Preview" }).click();
    await page.getByRole("status").filter({ hasText: "3 executions match this view." }).waitFor();
    // A preview starts nothing.
    expect(await flowlog.store.logs.retryLinks(failed[0] as string)).not.toHaveProperty("retriedBy");

    await page.getByRole("button", { name: "Retry 3 executions" }).click();
    const job = page.getByRole("definition").filter({ hasText: /^running/ });
    await job.waitFor();
    await page.getByText("waiting for the execution bucket").waitFor({ timeout: 30_000 });
    const progress = page.getByRole("progressbar", { name: "Executions processed" });
    expect(Number(await progress.getAttribute("max"))).toBe(3);
    await screenshot(page, "bulk-retry-waiting");

    await page.getByRole("button", { name: "Cancel the job" }).click();
    await page.locator(".status.cancelled").waitFor({ timeout: 20_000 });
    await expect(page.getByRole("button", { name: "Cancel the job" }).count()).resolves.toBe(0);
    const processed = Number(await progress.getAttribute("value"));
    expect(processed).toBeGreaterThanOrEqual(1);
    expect(processed).toBeLessThan(3);
    expect(problems).toEqual([]);
  }, 120_000);
});
