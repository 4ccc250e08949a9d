import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedWorkspace } from "../../src/seed/seed.js";
import { launchBrowser, openSignedIn, screenshot } from "../support/browser.js";
import { createAccount, startFlowlog, type TestAccount, type TestFlowlog } from "../support/flowlog.js";

/**
 * Issue 17's charts: executions and errors per hour, p50/p95 duration, cost per day by model over the
 * selected range and filters, drawn from one GetLogStats answer. The page's data tables (the charts'
 * text alternative) are compared with the API's answer for the same request.
 */
let flowlog: TestFlowlog;
let account: TestAccount;
let browser: Browser;
const end = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000).toISOString();
const start = new Date(Date.parse(end) - 3 * 86_400_000).toISOString();

interface Stats {
  hours: { hour: string; executions: number; errors: number; p50DurationMs?: number }[];
  modelCosts: { day: string; model: string; cost: number }[];
}

beforeAll(async () => {
  flowlog = await startFlowlog();
  account = await createAccount(flowlog.store);
  await seedWorkspace(flowlog.store, {
    workspaceId: account.workspaceId,
    executions: 400,
    days: 2,
    seed: "console-charts",
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await flowlog?.close();
});

async function apiStats(query: Record<string, string>): Promise<Stats> {
  const url = new URL("/api/v1/log-stats", flowlog.server.url);
  for (const [name, value] of Object.entries({ workspaceId: account.workspaceId, ...query }))
    url.searchParams.set(name, value);
  const response = await fetch(url, { headers: { "x-api-key": account.key } });
  expect(response.status).toBe(200);
  return (await response.json()) as Stats;
}

/** Opens the chart's table (its text alternative, closed at first) and reads its cells. */
async function tableRows(page: Page, summary: string, label: string): Promise<string[][]> {
  await page.getByText(summary).click();
  const table = page.getByRole("table", { name: label });
  await table.locator("tbody tr").first().waitFor({ state: "attached" });
  return table
    .locator("tbody tr")
    .evaluateAll((rows) =>
      rows.map((row) =>
        [...(row as unknown as { cells: { textContent: string }[] }).cells].map((c) => c.textContent),
      ),
    );
}

describe("the charts page", () => {
  it("draws the hours and the costs of the API's answer for the view's range and filters", async () => {
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    await page.goto(`${flowlog.server.url}/#/charts?ws=${account.workspaceId}&from=${start}&to=${end}`);
    const stats = await apiStats({ startDate: start, endDate: end });
    expect(stats.hours).toHaveLength(72);
    const hours = await tableRows(page, "The hours as a table", "Executions, errors and durations per hour");
    expect(hours.map((cells) => Number(cells[1]?.replace(/\D/g, "")))).toEqual(
      stats.hours.map((hour) => hour.executions),
    );
    expect(hours.map((cells) => Number(cells[2]?.replace(/\D/g, "")))).toEqual(
      stats.hours.map((hour) => hour.errors),
    );
    const costs = await tableRows(page, "The costs as a table", "Cost per day by model");
    expect(costs.map((cells) => `${cells[0]} ${cells[1]}`)).toEqual(
      stats.modelCosts.map((cost) => `${cost.day} ${cost.model}`),
    );
    expect(await page.locator(".chart canvas").count()).toBeGreaterThanOrEqual(3);
    await screenshot(page, "charts");
    expect(problems).toEqual([]);
  });

  it("applies the logs page's filters, and links back to the same view's logs", async () => {
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    await page.goto(
      `${flowlog.server.url}/#/charts?ws=${account.workspaceId}&from=${start}&to=${end}&level=error`,
    );
    const stats = await apiStats({ startDate: start, endDate: end, level: "error" });
    const hours = await tableRows(page, "The hours as a table", "Executions, errors and durations per hour");
    const shown = hours.map((cells) => Number(cells[1]?.replace(/\D/g, "")));
    expect(shown).toEqual(stats.hours.map((hour) => hour.executions));
    expect(shown.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // Only errors were counted: every execution of the view is an error.
    expect(hours.every((cells) => cells[1] === cells[2])).toBe(true);
    const logs = await page.getByRole("link", { name: "Logs of this view" }).getAttribute("href");
    expect(logs).toContain("level=error");
    expect(problems).toEqual([]);
  });

  it("says what the API refused: a range over 31 days names end_date", async () => {
    const { page } = await openSignedIn(browser, flowlog.server.url, account);
    await page.goto(
      `${flowlog.server.url}/#/charts?ws=${account.workspaceId}&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z`,
    );
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/endDate|end_date/);
  });
});
