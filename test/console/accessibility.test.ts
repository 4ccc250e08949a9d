import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedWorkspace } from "../../src/seed/seed.js";
import { accessibilityViolations, launchBrowser, openConsole, openSignedIn } from "../support/browser.js";
import { createAccount, startFlowlog, type TestAccount, type TestFlowlog } from "../support/flowlog.js";

/**
 * Issue 17: the console is accessible (keyboard, labels, contrast). axe-core checks every page against
 * WCAG 2.1 A and AA and its best practices; the keyboard tests walk the page as someone without a mouse.
 */
let flowlog: TestFlowlog;
let account: TestAccount;
let browser: Browser;
let entryId: string;

beforeAll(async () => {
  flowlog = await startFlowlog();
  account = await createAccount(flowlog.store);
  await seedWorkspace(flowlog.store, {
    workspaceId: account.workspaceId,
    executions: 60,
    seed: "console-a11y",
  });
  const newest = await fetch(`${flowlog.server.url}/api/v1/logs?workspaceId=${account.workspaceId}&limit=1`, {
    headers: { "x-api-key": account.key },
  });
  entryId = ((await newest.json()) as { data: { id: string }[] }).data[0]?.id ?? "";
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await flowlog?.close();
});

async function settled(page: Page): Promise<void> {
  await page.waitForLoadState("networkidle");
}

describe("every page meets WCAG 2.1 AA as axe-core checks it", () => {
  it("the sign-in form", async () => {
    const { page } = await openConsole(browser, flowlog.server.url, { bypassCSP: true });
    await settled(page);
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  for (const view of ["logs", "logs/ENTRY", "charts", "deliveries", "subscriptions", "workflows"]) {
    it(`#/${view}`, async () => {
      const { page, problems } = await openSignedIn(browser, flowlog.server.url, account, {
        bypassCSP: true,
      });
      await page.goto(`${flowlog.server.url}/#/${view.replace("ENTRY", entryId)}?ws=${account.workspaceId}`);
      await settled(page);
      expect(await accessibilityViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    });
  }
});

describe("the keyboard", () => {
  it("reaches the skip link first, and it moves focus to the page's content", async () => {
    const { page } = await openSignedIn(browser, flowlog.server.url, account);
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate("document.activeElement.id")).toBe("main");
  });

  it("opens every section from the navigation with Enter", async () => {
    const { page } = await openSignedIn(browser, flowlog.server.url, account);
    for (const section of ["Charts", "Deliveries", "Subscriptions", "Workflows", "Logs"]) {
      await page.getByRole("link", { name: section, exact: true }).focus();
      await page.keyboard.press("Enter");
      await expect
        .poll(() => page.getByRole("heading", { level: 1 }).first().textContent())
        .toContain(section);
    }
  });
});
