import { randomUUID } from "node:crypto";
import type { Client } from "@temporalio/client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { defaultPlanLimits } from "../../src/limits/plans.js";
import { createApi } from "../../src/server/api.js";
import { type ApiServer, startApiServer } from "../../src/server/api-server.js";
import { lazyTemporalClient } from "../../src/temporal/client.js";
import { newId } from "../../src/util/ids.js";
import { restWithKey } from "../support/api-server.js";
import { launchBrowser, openSignedIn, screenshot } from "../support/browser.js";
import { type RunningWorker, startWorker, testDeps } from "../support/engine.js";
import {
  createAccount,
  createWorkflow,
  offlineWorkflowState,
  operatorToken,
  startFlowlog,
  type TestAccount,
  type TestFlowlog,
} from "../support/flowlog.js";

/**
 * Issue 17's workflows page: the workspace's workflows, a run from the page (sync or async, with input
 * JSON) against a real worker on the shared Temporal dev server, and the links to the run's log entry and
 * to its execution in the Temporal Web UI. The API it talks to is served twice over one store: `flowlog`
 * without FLOWLOG_TEMPORAL_UI_URL, `linked` with it.
 */
const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const taskQueue = `console-workflows-${randomUUID()}`;
const temporalUiUrl = "http://temporal.test:8233";

let flowlog: TestFlowlog;
let linked: ApiServer;
let temporal: Client;
let worker: RunningWorker;
let browser: Browser;
let account: TestAccount;
let folderId: string;
/** Answers `{"ok": true, "city": <the input's city>}` without any network. */
let echoId: string;

beforeAll(async () => {
  flowlog = await startFlowlog({ taskQueue });
  temporal = lazyTemporalClient(temporalServer.address, temporalServer.namespace);
  linked = await startApiServer(
    { port: 0, host: "127.0.0.1", temporalUiUrl, temporalNamespace: temporalServer.namespace },
    {
      ...createApi({
        config: { operatorToken, publicBaseUrl: "http://flowlog.test", planLimits: defaultPlanLimits },
        store: flowlog.store,
        temporal: { client: temporal, taskQueue },
      }),
    },
  );
  worker = await startWorker(temporalServer, testDeps(flowlog.store), taskQueue);
  account = await createAccount(flowlog.store);
  folderId = newId("fld");
  await flowlog.store.workflows.createFolder({
    id: folderId,
    workspaceId: account.workspaceId,
    name: "Answers",
    createdAt: Date.now(),
  });
  echoId = await createWorkflow(flowlog.store, account.workspaceId, "Echo the city", folderId, echoState);
  // At the top level, in no folder.
  await createWorkflow(flowlog.store, account.workspaceId, "Nightly report");
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await linked?.close();
  await flowlog?.close();
  await temporal?.connection.close();
});

const echoState = {
  ...offlineWorkflowState,
  blocks: {
    ...offlineWorkflowState.blocks,
    done: {
      type: "response",
      name: "Done",
      config: { data: { ok: true, city: "<start.city>" } },
      enabled: true,
    },
  },
};

const call = (method: string, path: string, body?: unknown) =>
  restWithKey(linked.url, account.key, method, path, body);

/** The workflows page, reached from the navigation as a person would, once its rows are in. */
async function openWorkflows(baseUrl = linked.url) {
  const opened = await openSignedIn(browser, baseUrl, account);
  await opened.page
    .getByRole("navigation", { name: "Sections" })
    .getByRole("link", { name: "Workflows" })
    .click();
  await opened.page.getByRole("heading", { name: "Workflows", level: 1 }).waitFor();
  await opened.page.locator("table.workflows tbody tr td a").first().waitFor();
  return opened;
}

/** One workflow's page with its run form. */
async function openWorkflow(name: string, baseUrl = linked.url) {
  const opened = await openWorkflows(baseUrl);
  await opened.page.getByRole("link", { name, exact: true }).click();
  await opened.page.getByRole("heading", { name, level: 1 }).waitFor();
  return opened;
}

/** Fills the input, picks the mode, presses Run, and returns the newest run's card once it is shown. */
async function run(page: Page, mode: "Sync" | "Async", input: string) {
  await page.getByRole("radio", { name: new RegExp(`^${mode}:`) }).check();
  await page.getByLabel("Input (JSON)").fill(input);
  const before = await page.locator("article.run").count();
  await page.getByRole("button", { name: "Run" }).click();
  await expect.poll(() => page.locator("article.run").count(), { timeout: 30_000 }).toBe(before + 1);
  return page.locator("article.run").first();
}

/** A fact of a run's card, by its term. */
const fact = (card: ReturnType<Page["locator"]>, term: string) => card.locator(`dt:text-is("${term}") + dd`);

/** The log entry the logs API lists for an execution. */
async function loggedEntry(executionId: string) {
  const response = await call(
    "GET",
    `/api/v1/logs?workspaceId=${account.workspaceId}&executionId=${executionId}`,
  );
  const body = response.json as { data: { id: string; level: string; totalDurationMs: number }[] };
  return body.data[0];
}

describe("FLOWLOG_TEMPORAL_UI_URL: the page learns where the Temporal Web UI is from its document", () => {
  it("is an http(s) URL, kept without a trailing slash, and unset by default", () => {
    expect(loadConfig({}).temporalUiUrl).toBeUndefined();
    expect(loadConfig({ FLOWLOG_TEMPORAL_UI_URL: "" }).temporalUiUrl).toBeUndefined();
    expect(loadConfig({ FLOWLOG_TEMPORAL_UI_URL: "https://temporal.example/ui/" }).temporalUiUrl).toBe(
      "https://temporal.example/ui",
    );
    expect(() => loadConfig({ FLOWLOG_TEMPORAL_UI_URL: "temporal:8233" })).toThrow(ConfigError);
    try {
      loadConfig({ FLOWLOG_TEMPORAL_UI_URL: "ftp://temporal.example" });
    } catch (error) {
      expect((error as ConfigError).problems).toEqual(["FLOWLOG_TEMPORAL_UI_URL: must be an http(s) URL"]);
    }
  });

  it("is written into index.html as an execution link template, HTML-escaped, under the same strict policy", async () => {
    const server = await startApiServer({
      port: 0,
      host: "127.0.0.1",
      temporalUiUrl: `http://temporal.test/a&b'"<c>`,
      temporalNamespace: "team one",
    });
    try {
      const response = await fetch(`${server.url}/`, { headers: { "accept-encoding": "br, gzip" } });
      const html = await response.text();
      expect(html).toContain(
        '<meta name="flowlog-temporal-execution-url" content="http://temporal.test/a&#38;b&#39;&#34;&#60;c&#62;' +
          '/namespaces/team%20one/workflows/execution-{executionId}" />',
      );
      expect(response.headers.get("content-security-policy")).toMatch(/script-src 'self';/);
      expect(response.headers.get("content-security-policy")).not.toContain("unsafe-inline");
    } finally {
      await server.close();
    }
  });

  it("is empty in the document when the setting is unset", async () => {
    const html = await (await fetch(`${flowlog.server.url}/`)).text();
    expect(html).toContain('<meta name="flowlog-temporal-execution-url" content="" />');
  });
});

describe("the workflows list", () => {
  const names = (page: Page) => page.locator("table.workflows tbody tr td:first-child").allTextContents();

  it("shows the workspace's workflows as the API lists them, each linked to its logs, and filters by folder", async () => {
    const { page, problems } = await openWorkflows();
    const listed = await call("GET", `/api/v1/workspaces/${account.workspaceId}/workflows`);
    const workflows = (listed.json as { workflows: { id: string; name: string; version: number }[] })
      .workflows;
    await expect.poll(() => names(page)).toEqual(workflows.map((workflow) => workflow.name));

    const echoRow = page.locator("table.workflows tbody tr", { hasText: "Echo the city" });
    expect(await echoRow.locator("td").allTextContents()).toEqual([
      "Echo the city",
      "Answers",
      "Echo the city, for tests",
      "1",
      expect.any(String),
      "Logs",
    ]);
    expect(await echoRow.getByRole("link", { name: "Logs of Echo the city" }).getAttribute("href")).toBe(
      `#/logs?ws=${account.workspaceId}&workflows=${echoId}`,
    );
    await screenshot(page, "workflows");

    await page.getByLabel("Folder").selectOption({ label: "Answers" });
    await expect.poll(() => names(page)).toEqual(["Echo the city"]);
    expect(new URL(page.url()).hash).toContain(`folder=${folderId}`);
    await page.getByLabel("Folder").selectOption({ label: "No folder" });
    await expect.poll(() => names(page)).toEqual(["Nightly report"]);
    await page.getByLabel("Folder").selectOption({ label: "All folders" });
    await expect.poll(() => names(page)).toHaveLength(workflows.length);
    expect(problems).toEqual([]);
  });
});

describe("running a workflow from the page", () => {
  it("runs it sync with the input JSON and shows the API's outcome and output, its log entry and its Temporal execution", async () => {
    const { page, problems } = await openWorkflow("Echo the city");
    const card = await run(page, "Sync", '{"city": "Lyon"}');

    expect(await fact(card, "Status").textContent()).toBe("success");
    expect(JSON.parse((await fact(card, "Output").textContent()) ?? "")).toEqual({ ok: true, city: "Lyon" });
    const executionId = (await fact(card, "Execution").textContent()) ?? "";
    expect(executionId).toMatch(/^ex_/);

    const entry = await loggedEntry(executionId);
    expect(entry?.level).toBe("info");
    const entryLink = card.getByRole("link", { name: entry?.id ?? "no entry" });
    await expect
      .poll(() => entryLink.getAttribute("href"))
      .toBe(`#/logs/${entry?.id}?ws=${account.workspaceId}`);
    expect(await fact(card, "Duration").textContent()).not.toBe("–");

    // The link opens the execution's Temporal workflow: its id is the one the worker ran.
    const href =
      (await card.getByRole("link", { name: /Open in the Temporal UI/ }).getAttribute("href")) ?? "";
    const prefix = `${temporalUiUrl}/namespaces/${temporalServer.namespace}/workflows/`;
    expect(href.startsWith(prefix)).toBe(true);
    const described = await temporal.workflow
      .getHandle(decodeURIComponent(href.slice(prefix.length)))
      .describe();
    expect(described.status.name).toBe("COMPLETED");
    expect(described.taskQueue).toBe(taskQueue);

    await screenshot(page, "workflow-run");
    await entryLink.click();
    expect(new URL(page.url()).hash).toBe(`#/logs/${entry?.id}?ws=${account.workspaceId}`);
    expect(problems).toEqual([]);
  });

  it("runs it async: the execution id at once, then the status its log entry gives", async () => {
    const { page, problems } = await openWorkflow("Echo the city");
    const card = await run(page, "Async", '{"city": "Oslo"}');
    const executionId = (await fact(card, "Execution").textContent()) ?? "";
    expect(executionId).toMatch(/^ex_/);
    expect(await card.locator("dt").allTextContents()).not.toContain("Output");

    await expect
      .poll(() => fact(card, "Status").textContent(), { timeout: 20_000 })
      .toBe("ended, logged as info");
    const entry = await loggedEntry(executionId);
    expect(await card.getByRole("link", { name: entry?.id ?? "no entry" }).getAttribute("href")).toBe(
      `#/logs/${entry?.id}?ws=${account.workspaceId}`,
    );
    expect(await card.getByRole("link", { name: /Open in the Temporal UI/ }).getAttribute("href")).toBe(
      `${temporalUiUrl}/namespaces/${temporalServer.namespace}/workflows/execution-${executionId}`,
    );
    expect(problems).toEqual([]);
  });

  it("refuses input that is not JSON in the page, naming the input, and calls no API", async () => {
    const { page, problems } = await openWorkflow("Echo the city");
    const executes: string[] = [];
    page.on("request", (request) => {
      if (request.url().endsWith("/ExecuteWorkflow")) executes.push(request.url());
    });
    await page.getByLabel("Input (JSON)").fill('{"city": Lyon}');
    await page.getByRole("button", { name: "Run" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/^The input is not valid JSON: /);
    expect(await page.getByLabel("Input (JSON)").getAttribute("aria-invalid")).toBe("true");
    await expect.poll(() => page.evaluate("document.activeElement?.id")).toBe("run-input");
    expect(await page.locator("article.run").count()).toBe(0);
    expect(executes).toEqual([]);
    await screenshot(page, "workflow-run-invalid-input");
    expect(problems).toEqual([]);
  });

  it("says what the API refused, in its own words", async () => {
    const doomed = await createWorkflow(flowlog.store, account.workspaceId, "Soon deleted", null, echoState);
    const { page, problems } = await openWorkflow("Soon deleted");
    expect((await call("DELETE", `/api/v1/workflows/${doomed}`)).status).toBe(200);
    await page.getByRole("button", { name: "Run" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain(doomed);
    expect(await page.locator("article.run").count()).toBe(0);
    // The refusal is the browser's own log line for the 404; nothing else may go wrong.
    expect(problems.filter((problem) => !problem.includes("404"))).toEqual([]);
  });

  it("shows no Temporal UI link when FLOWLOG_TEMPORAL_UI_URL is unset", async () => {
    const { page, problems } = await openWorkflow("Echo the city", flowlog.server.url);
    const card = await run(page, "Sync", '{"city": "Rome"}');
    expect(await fact(card, "Status").textContent()).toBe("success");
    expect(await card.locator("dt").allTextContents()).not.toContain("Temporal");
    expect(await card.getByRole("link", { name: /Temporal/ }).count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
