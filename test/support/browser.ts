import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { installDebianPackages } from "../../src/tools/debian-packages.js";
import { isExecutable } from "../../src/tools/executables.js";

/**
 * Debian's Chromium packages (issue 17), installed like our other tools. Playwright itself runs headless
 * tests in Chromium's headless shell: the same Blink and V8 without the desktop browser's layers. It drives
 * the console's tests at half the CPU of the full browser (62 tests: 29 CPU-seconds against 59, issue 50).
 * The console bench times what a person sees, so it opens the browser a person runs, headless.
 */
const browsers = {
  "headless-shell": { path: "/usr/bin/chromium-headless-shell", debianPackage: "chromium-headless-shell" },
  chromium: { path: "/usr/bin/chromium", debianPackage: "chromium" },
};
export type BrowserKind = keyof typeof browsers;

/** Where the browser tests leave a screenshot of each page they check (git-ignored; look at them). */
export const screenshotDir = path.resolve("test-results/console");

/** Global set-up: the browser installed, the console built from what console/ holds now. */
export async function prepareConsoleTests(kind: BrowserKind = "headless-shell"): Promise<void> {
  const { path: executable, debianPackage } = browsers[kind];
  if (!(await isExecutable(executable))) {
    await installDebianPackages([debianPackage], `${executable} is needed by the console's tests and bench`);
  }
  execFileSync(process.execPath, ["scripts/build-console.mjs", "--if-stale"], { stdio: "inherit" });
}

/**
 * Headless Chromium with nothing of its own on the network: this machine reaches no host but its own, and
 * a browser's background fetches (updates, sync, safe browsing) would only fail and slow it down.
 */
export function launchBrowser(kind: BrowserKind = "headless-shell"): Promise<Browser> {
  return chromium.launch({
    executablePath: browsers[kind].path,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export interface ConsolePage {
  page: Page;
  /** What went wrong in the page: uncaught errors and console errors. A test expects none. */
  problems: string[];
}

/**
 * A fresh browser context (its own sessionStorage) with the console open at `/`, not yet signed in.
 * `bypassCSP` lets a test inject its own script (the accessibility checker), which the page's policy refuses.
 */
export async function openConsole(
  browser: Browser,
  baseUrl: string,
  { bypassCSP = false } = {},
): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  await page.goto(`${baseUrl}/`);
  return { page, problems };
}

/** Signs in through the form, as a person would, and waits for the logs page. */
export async function signIn(page: Page, key: string, workspaceId: string): Promise<void> {
  await page.getByLabel("API key").fill(key);
  await page.getByLabel("Workspace id").fill(workspaceId);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Logs", level: 1 }).waitFor();
}

export async function openSignedIn(
  browser: Browser,
  baseUrl: string,
  account: { key: string; workspaceId: string },
  options: { bypassCSP?: boolean } = {},
): Promise<ConsolePage> {
  const opened = await openConsole(browser, baseUrl, options);
  await signIn(opened.page, account.key, account.workspaceId);
  return opened;
}

/** Saves the page as `<name>.png` under test-results/console/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true });
}

/**
 * The WCAG 2.1 A and AA rules (labels, contrast, names, roles, keyboard reach) and axe's best practices
 * that the page breaks, one line each; the page must come from a context opened with `bypassCSP`.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: createRequire(import.meta.url).resolve("axe-core/axe.min.js") });
  const result = (await page.evaluate(
    `axe.run(document, { runOnly: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] })`,
  )) as { violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] };
  return result.violations.map(
    (violation) =>
      `${violation.id} (${violation.impact}): ${violation.help}, at ${violation.nodes
        .slice(0, 3)
        .map((node) => node.target.join(" "))
        .join("; ")}`,
  );
}
