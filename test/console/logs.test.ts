import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedWorkspace } from "../../src/seed/seed.js";
import { launchBrowser, openConsole, openSignedIn, screenshot, signIn } from "../support/browser.js";
import {
  createAccount,
  createWorkflow,
  execution,
  startFlowlog,
  type TestAccount,
  type TestFlowlog,
} from "../support/flowlog.js";

/**
 * Issue 17: the console at `/` is a client of the public API. These tests drive it in Chromium (its
 * headless shell, support/browser.ts) against a real `flowlog` API server over seeded logs, and compare
 * what the page shows with what the API answers for the same request.
 */
let flowlog: TestFlowlog;
let account: TestAccount;
let browser: Browser;

beforeAll(async () => {
  flowlog = await startFlowlog();
  account = await createAccount(flowlog.store);
  await seedWorkspace(flowlog.store, {
    workspaceId: account.workspaceId,
    executions: 240,
    days: 3,
    seed: "console-logs",
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await flowlog?.close();
});

/** The execution ids of the logs API's page for these query parameters, newest first. */
async function apiPage(query: Record<string, string>): Promise<{ ids: string[]; nextCursor?: string }> {
  const url = new URL("/api/v1/logs", flowlog.server.url);
  for (const [name, value] of Object.entries({ workspaceId: account.workspaceId, limit: "50", ...query }))
    url.searchParams.set(name, value);
  const response = await fetch(url, { headers: { "x-api-key": account.key } });
  const body = (await response.json()) as { data: { executionId: string }[]; nextCursor?: string };
  return { ids: body.data.map((entry) => entry.executionId), nextCursor: body.nextCursor };
}

describe("the console's document", () => {
  it("is served at / with a policy that lets only its own script run and nothing frame it", async () => {
    const response = await fetch(`${flowlog.server.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    const html = await response.text();
    const script = /src="(\/console\/app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${flowlog.server.url}${script}`, { headers: { "accept-encoding": "br" } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
  });

  it("answers 404 for a console file that does not exist, and leaves the API's paths alone", async () => {
    expect((await fetch(`${flowlog.server.url}/console/nothing.js`)).status).toBe(404);
    const api = await fetch(`${flowlog.server.url}/api/v1/logs?workspaceId=${account.workspaceId}`);
    expect(api.status).toBe(401);
  });
});

describe("the header", () => {
  it("shows how long the workspace keeps its logs, as the API answers it (D41)", async () => {
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    await expect.poll(() => page.locator("header .retention").textContent()).toBe("Logs kept 365 days");
    const put = await fetch(`${flowlog.server.url}/api/v1/workspaces/${account.workspaceId}/log-retention`, {
      method: "PUT",
      headers: { "x-api-key": account.key, "content-type": "application/json" },
      body: JSON.stringify({ retentionDays: 30 }),
    });
    expect(put.status).toBe(200);
    await page.reload();
    await expect.poll(() => page.locator("header .retention").textContent()).toBe("Logs kept 30 days");
    expect(await page.locator("header .retention").getAttribute("title")).toBe(
      "The enterprise plan keeps logs 365 days; this workspace chose 30",
    );
    await fetch(`${flowlog.server.url}/api/v1/workspaces/${account.workspaceId}/log-retention`, {
      method: "PUT",
      headers: { "x-api-key": account.key, "content-type": "application/json" },
      body: "{}",
    });
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe("signing in", () => {
  it("refuses a wrong key with the reason, and keeps nothing in the browser", async () => {
    const { page, problems } = await openConsole(browser, flowlog.server.url);
    await page.getByLabel("API key").fill("flk_not-a-key");
    await page.getByLabel("Workspace id").fill(account.workspaceId);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("not valid");
    expect(await page.evaluate("sessionStorage.length + localStorage.length")).toBe(0);
    await screenshot(page, "sign-in-refused");
    // The refused call is the browser's own 401 log line; nothing else may go wrong.
    expect(problems.filter((problem) => !problem.includes("401"))).toEqual([]);
  });

  it("keeps the key in sessionStorage only, and the workspace in the URL", async () => {
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    expect(await page.evaluate("Object.keys(sessionStorage)")).toEqual(["flowlog.apiKey"]);
    expect(await page.evaluate("localStorage.length")).toBe(0);
    expect(await page.evaluate("document.cookie")).toBe("");
    expect(new URL(page.url()).hash).toContain(`ws=${account.workspaceId}`);
    expect(problems).toEqual([]);
  });

  it("shows the limits object of the last answer on every page", async () => {
    const { page } = await openSignedIn(browser, flowlog.server.url, account);
    const limits = page.getByLabel("Plan limits and usage");
    await expect.poll(() => limits.textContent()).toContain("enterprise");
    await page.getByRole("link", { name: "Workflows" }).click();
    await expect.poll(() => limits.textContent()).toContain("Sync executions");
  });
});

describe("the logs page", () => {
  const rowsOf = async (page: import("playwright-core").Page) =>
    page.locator("table.logs tbody tr td code").allTextContents();

  it("shows the API's newest page, and pages forwards and back by its cursors", async () => {
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    const first = await apiPage({});
    await expect.poll(() => rowsOf(page)).toEqual(first.ids);
    await screenshot(page, "logs");

    await page.getByRole("button", { name: "Next" }).click();
    const second = await apiPage({ cursor: first.nextCursor ?? "" });
    await expect.poll(() => rowsOf(page)).toEqual(second.ids);

    await page.getByRole("button", { name: "Previous" }).click();
    await expect.poll(() => rowsOf(page)).toEqual(first.ids);
    expect(problems).toEqual([]);
  });

  it("applies filters through the API, keeps them in a URL that opens the same view", async () => {
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    await page.getByLabel("Level").selectOption("error");
    await page.getByRole("checkbox", { name: "schedule" }).check();
    await page.getByRole("checkbox", { name: "api" }).check();
    await page.getByRole("button", { name: "Apply filters" }).click();
    const filtered = await apiPage({ level: "error", triggers: "api,schedule" });
    expect(filtered.ids.length).toBeGreaterThan(0);
    await expect.poll(() => rowsOf(page)).toEqual(filtered.ids);
    const shared = page.url();
    expect(new URL(shared).hash).toMatch(/level=error/);

    const other = await openSignedIn(browser, flowlog.server.url, account);
    await other.page.goto(shared);
    await expect.poll(() => rowsOf(other.page)).toEqual(filtered.ids);
    await expect.poll(() => other.page.getByLabel("Level").inputValue()).toBe("error");
    expect([...problems, ...other.problems]).toEqual([]);
  });

  it("keeps filters chosen while the page is still loading until they are applied", async () => {
    // The workspace's folders (with its workflows, what the filter form lists) are held on their way
    // back from the server until the filters are chosen: their arrival then redraws the form between
    // choosing and applying, as a slow answer would. A form that took its fields' values from the URL
    // on every render lost the choices there, and Apply sent no filters.
    const { page, problems } = await openConsole(browser, flowlog.server.url);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route("**/flowlog.workflows.v1.WorkflowsService/ListFolders", async (route) => {
      await held;
      await route.continue();
    });
    await signIn(page, account.key, account.workspaceId);
    await page.getByLabel("Level").selectOption("error");
    await page.getByRole("checkbox", { name: "schedule" }).check();
    const workflowChoices = page.locator('select[name="workflows"] option');
    expect(await workflowChoices.count()).toBe(0);
    release();
    await workflowChoices.first().waitFor({ state: "attached" });
    await page.getByRole("button", { name: "Apply filters" }).click();

    const filtered = await apiPage({ level: "error", triggers: "schedule" });
    expect(filtered.ids.length).toBeGreaterThan(0);
    await expect.poll(() => rowsOf(page)).toEqual(filtered.ids);
    expect(new URL(page.url()).hash).toMatch(/level=error/);
    expect(problems).toEqual([]);
  });

  it("opens an entry from a filtered page, and leads back to the same page of the same view", async () => {
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    await page.goto(`${flowlog.server.url}/#/logs?ws=${account.workspaceId}&level=info`);
    const first = await apiPage({ level: "info" });
    await expect.poll(() => rowsOf(page)).toEqual(first.ids);
    await page.getByRole("button", { name: "Next" }).click();
    const second = await apiPage({ level: "info", cursor: first.nextCursor ?? "" });
    await expect.poll(() => rowsOf(page)).toEqual(second.ids);
    await page.locator("table.logs tbody tr td a").first().click();
    await page.getByRole("link", { name: "← Back to the logs" }).click();
    await expect.poll(() => rowsOf(page)).toEqual(second.ids);
    expect(new URL(page.url()).hash).toMatch(/level=info/);
    expect(problems).toEqual([]);
  });

  it("says what the API refused, naming the field", async () => {
    const { page } = await openSignedIn(browser, flowlog.server.url, account);
    await page.goto(`${flowlog.server.url}/#/logs?ws=${account.workspaceId}&minCost=-1`);
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/minCost|min_cost/);
  });

  it("tails new entries live, newest first, as they are written", async () => {
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    await page.getByRole("button", { name: "Live tail" }).click();
    await page.getByRole("status").waitFor();
    const workflowId = await createWorkflow(flowlog.store, account.workspaceId, "Tailed");
    for (const offset of [1, 2, 3]) {
      await flowlog.store.logs.insertExecution(
        execution(account, workflowId, { startedAt: Date.now() + offset * 1_000 }),
      );
    }
    const newest = await apiPage({ limit: "3" });
    await expect
      .poll(() => rowsOf(page).then((rows) => rows.slice(0, 3)), { timeout: 10_000 })
      .toEqual(newest.ids);
    expect(problems).toEqual([]);
  });

  it("shows a long execution that started before a short one when it is written, from TailLogs' stream (D44)", async () => {
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    await page.getByRole("button", { name: "Live tail" }).click();
    await page.getByRole("status").waitFor();
    const workflowId = await createWorkflow(flowlog.store, account.workspaceId, "Long and short");
    const now = Date.now();
    const short = execution(account, workflowId, { startedAt: now + 60_000, totalDurationMs: 1_000 });
    const long = execution(account, workflowId, { startedAt: now, totalDurationMs: 120_000 });
    await flowlog.store.logs.insertExecution(short);
    await expect.poll(() => rowsOf(page).then((rows) => rows[0])).toBe(short.entry.executionId);
    await flowlog.store.logs.insertExecution(long);
    // Newest written first: the long one on top, though it started first.
    await expect
      .poll(() => rowsOf(page).then((rows) => rows.slice(0, 2)))
      .toEqual([long.entry.executionId, short.entry.executionId]);
    expect(problems).toEqual([]);
  });
});

describe("signing out", () => {
  it("forgets the key and returns to the sign-in form", async () => {
    const { page } = await openSignedIn(browser, flowlog.server.url, account);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
  });
});
