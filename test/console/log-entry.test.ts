import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedWorkspace } from "../../src/seed/seed.js";
import { accessibilityViolations, launchBrowser, openSignedIn, screenshot } from "../support/browser.js";
import {
  createAccount,
  createWorkflow,
  startFlowlog,
  type TestAccount,
  type TestFlowlog,
} from "../support/flowlog.js";

/**
 * Issue 17: an entry's page shows the trace the logs API answers as a waterfall, and the workflow state of
 * its execution as a graph with the path taken. The seeded entries come from the real engine (seed.ts), so
 * they hold loops, parallels, agent spans with tokens and cost, and failures as executions make them.
 */
let flowlog: TestFlowlog;
let account: TestAccount;
let browser: Browser;

interface ApiSpan {
  id: string;
  name: string;
  type: string;
  status: string;
  error?: string;
  model?: string;
  tokens?: { prompt: number; completion: number; total: number };
  cost?: number;
  children: ApiSpan[];
}

interface ApiEntry {
  id: string;
  level: string;
  executionId: string;
  executionData: { traceSpans: ApiSpan[] };
}

const block = (type: string, name: string, config: object) => ({ type, name, config, enabled: true });

/** A loop inside a parallel, which the demo workflows lack: each region's pages fetched, then summarised. */
const nestedWorkflowState = {
  blocks: {
    starter: block("starter", "Start", {}),
    fetch: block("api", "Fetch region", { method: "GET", url: "https://regions.example.com/api/pages" }),
    summarize: block("agent", "Summarize page", { model: "gpt-4o-mini", prompt: "Summarise the page." }),
    respond: block("response", "Respond", { data: { done: true } }),
  },
  edges: [
    { source: "starter", target: "regions" },
    { source: "fetch", target: "pages" },
    { source: "regions", target: "respond" },
  ],
  loops: { pages: { type: "for", nodes: ["summarize"], iterations: 2 } },
  parallels: { regions: { type: "count", nodes: ["fetch", "pages"], count: 2 } },
};

beforeAll(async () => {
  flowlog = await startFlowlog();
  account = await createAccount(flowlog.store);
  // The seeder runs every workflow of the workspace with the real engine: this one and the five demos.
  await createWorkflow(flowlog.store, account.workspaceId, "Regional digest", null, nestedWorkflowState);
  await seedWorkspace(flowlog.store, {
    workspaceId: account.workspaceId,
    executions: 300,
    workflows: 6,
    days: 3,
    seed: "console-log-entry",
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await flowlog?.close();
});

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(new URL(path, flowlog.server.url), { headers: { "x-api-key": account.key } });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

const flatten = (spans: ApiSpan[]): ApiSpan[] => spans.flatMap((span) => [span, ...flatten(span.children)]);

type EntryTest = (entry: ApiEntry, spans: ApiSpan[]) => boolean;

/**
 * The newest seeded entry of the first page of `query` whose trace passes a test, trying the tests in
 * order (the seeder draws a new workspace's executions afresh, so a rarer shape may be missing), in the
 * detail form of `GET /api/v1/logs/{id}`.
 */
async function entryWhere(tests: EntryTest[], query = ""): Promise<ApiEntry> {
  const { data } = await getJson<{ data: ApiEntry[] }>(
    `/api/v1/logs?workspaceId=${account.workspaceId}&limit=1000&includeTraceSpans=true${query}`,
  );
  for (const test of tests) {
    const found = data.find((entry) => test(entry, flatten(entry.executionData.traceSpans)));
    if (found) return (await getJson<{ data: ApiEntry }>(`/api/v1/logs/${found.id}`)).data;
  }
  throw new Error("the seeded logs have no such entry");
}

/** A loop or parallel at the top of the trace, with agent runs directly inside it. */
const containerWithAgent = (type: string): EntryTest[] => [
  ({ executionData }) =>
    executionData.traceSpans.some(
      (span) => span.type === type && span.children.some((c) => c.type === "agent"),
    ),
];

const loopInParallel: EntryTest[] = [
  (entry, spans) =>
    entry.level === "info" &&
    spans.some((span) => span.type === "parallel" && span.children.some((c) => c.type === "loop")),
];

async function openEntry(entry: ApiEntry, options = { bypassCSP: false }) {
  const opened = await openSignedIn(browser, flowlog.server.url, account, options);
  await opened.page.goto(`${flowlog.server.url}/#/logs/${entry.id}?ws=${account.workspaceId}`);
  await opened.page.locator(".waterfall").waitFor();
  return opened;
}

/** The blocks of the snapshot that ran: those with a span whose id is theirs plus iteration or branch suffixes. */
function executedBlocks(blockIds: string[], spans: ApiSpan[]): string[] {
  const literal = (id: string) => id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return blockIds.filter((id) =>
    spans.some((span) => new RegExp(`^${literal(id)}(?:-[ib]\\d+)*$`).test(span.id)),
  );
}

/** What the graph draws and marks as run, beside what the API says: the snapshot's blocks, those with a span. */
async function graphAgainstApi(page: Page, entry: ApiEntry) {
  const { workflowState } = await getJson<{ workflowState: { blocks: Record<string, unknown> } }>(
    `/api/v1/logs/executions/${entry.executionId}`,
  );
  const blockIds = Object.keys(workflowState.blocks).sort();
  const nodes = page.locator(".workflow-graph svg .graph-node");
  await nodes.first().waitFor();
  const drawn = await nodes.evaluateAll((elements) =>
    elements.map((e) => ({ id: e.getAttribute("data-block-id"), executed: e.getAttribute("data-executed") })),
  );
  return {
    blockIds,
    ran: executedBlocks(blockIds, flatten(entry.executionData.traceSpans)),
    drawn: drawn.map((node) => node.id).sort(),
    marked: drawn
      .filter((node) => node.executed === "true")
      .map((node) => node.id)
      .sort(),
  };
}

describe("the trace waterfall", () => {
  it.each(["loop", "parallel"])(
    "shows every span of a trace with a %s of agent runs, nested as the API nests them",
    async (type) => {
      const entry = await entryWhere(containerWithAgent(type));
      const spans = flatten(entry.executionData.traceSpans);
      const { page, problems } = await openEntry(entry);
      const rows = page.locator(".waterfall [data-span-id]");
      await expect.poll(() => rows.count()).toBe(spans.length);
      expect(await rows.evaluateAll((e) => e.map((row) => row.getAttribute("data-span-id")))).toEqual(
        spans.map((span) => span.id),
      );
      expect(await page.locator(".waterfall .span-name").allTextContents()).toEqual(spans.map((s) => s.name));
      const container = spans.find((span) => span.type === type) as ApiSpan;
      const nested = page.locator(`[data-span-id="${container.id}"] + ul.spans > li > [data-span-id]`);
      expect(await nested.evaluateAll((e) => e.map((row) => row.getAttribute("data-span-id")))).toEqual(
        container.children.map((child) => child.id),
      );
      expect(problems).toEqual([]);
    },
  );

  it("opens an agent span to its model, tokens and cost as the API has them", async () => {
    // A failed agent run has no tokens or cost (simulate.ts), so the entry is chosen by a priced one: one
    // nested in a loop if the draw has it, else any.
    const priced = (span: ApiSpan) =>
      span.type === "agent" && span.tokens !== undefined && Boolean(span.cost);
    const entry = await entryWhere([
      ({ executionData }) =>
        executionData.traceSpans.some((span) => span.type === "loop" && span.children.some(priced)),
      (_, spans) => spans.some(priced),
    ]);
    const agent = flatten(entry.executionData.traceSpans).find(priced);
    if (!agent?.tokens || agent.cost === undefined) throw new Error("no agent span with tokens and cost");
    const { page, problems } = await openEntry(entry);
    const row = page.locator(`[data-span-id="${agent.id}"]`);
    const toggle = row.locator("button.span-toggle");
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    await toggle.click();
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
    const details = row.locator(".span-details");
    const figure = (name: string) => details.locator(`data.${name}`).getAttribute("value");
    expect(await figure("prompt")).toBe(String(agent.tokens.prompt));
    expect(await figure("completion")).toBe(String(agent.tokens.completion));
    expect(await figure("total")).toBe(String(agent.tokens.total));
    expect(Number(await figure("cost"))).toBe(agent.cost);
    expect(await details.textContent()).toContain(agent.model);
    await expect.poll(() => details.locator("figure.json").count()).toBe(2);
    await screenshot(page, "log-entry");
    expect(problems).toEqual([]);
  });

  it("is operable from the keyboard: arrows move between spans, Enter opens one", async () => {
    const entry = await entryWhere(containerWithAgent("parallel"));
    const [first, second] = flatten(entry.executionData.traceSpans);
    const { page, problems } = await openEntry(entry);
    await page.locator(`[data-span-id="${first?.id}"] button.span-toggle`).focus();
    const focusedSpan = () =>
      page.evaluate('document.activeElement.closest("[data-span-id]")?.getAttribute("data-span-id")');
    await page.keyboard.press("ArrowDown");
    expect(await focusedSpan()).toBe(second?.id);
    await page.keyboard.press("Enter");
    const toggle = page.locator(`[data-span-id="${second?.id}"] button.span-toggle`);
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
    await page.keyboard.press("Space");
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    await page.keyboard.press("ArrowUp");
    expect(await focusedSpan()).toBe(first?.id);
    expect(problems).toEqual([]);
  });

  it("says what failed: every span's error is on the page without opening it", async () => {
    const entry = await entryWhere(
      [(_, spans) => spans.some((span) => span.children.length > 0 && span.status === "error"), () => true],
      "&level=error",
    );
    const failed = flatten(entry.executionData.traceSpans).filter((span) => span.error !== undefined);
    expect(failed.length).toBeGreaterThan(0);
    const { page, problems } = await openEntry(entry);
    for (const span of failed) {
      expect(await page.locator(`[data-span-id="${span.id}"] .span-error`).textContent()).toBe(span.error);
      expect(await page.locator(`[data-span-id="${span.id}"] .status`).textContent()).toBe("error");
    }
    const graph = await graphAgainstApi(page, entry);
    expect(graph.marked).toEqual(graph.ran);
    expect(graph.ran.length).toBeLessThan(graph.blockIds.length);
    const markedFailed = await page
      .locator(".graph-node.error")
      .evaluateAll((e) => e.map((node) => node.getAttribute("data-block-id")).sort());
    expect(markedFailed).toEqual(executedBlocks(graph.blockIds, failed));
    await screenshot(page, "log-entry-error");
    expect(problems).toEqual([]);
  });
});

describe("the workflow graph", () => {
  it.each(["loop", "parallel"])(
    "draws one node per block of the snapshot of a run with a %s, and marks exactly those that ran",
    async (type) => {
      const entry = await entryWhere(containerWithAgent(type));
      const { page, problems } = await openEntry(entry);
      const { blockIds, ran, drawn, marked } = await graphAgainstApi(page, entry);
      expect(drawn).toEqual(blockIds);
      expect(marked).toEqual(ran);
      const container = page.locator(`.graph-container[data-executed="true"]`);
      expect(await container.count()).toBe(1);
      const listed = page.locator(".path-taken li");
      expect(
        (await listed.evaluateAll((e) => e.map((li) => li.getAttribute("data-block-id")))).sort(),
      ).toEqual(ran);
      const title = await page.locator(".workflow-graph svg > title").textContent();
      expect(title).toContain(`${blockIds.length} blocks, ${ran.length} of them ran`);
      await screenshot(page, `log-entry-graph-${type}`);
      expect(problems).toEqual([]);
    },
  );
});

describe("nested containers", () => {
  it("nests a loop's runs inside each branch of a parallel, and draws the loop inside the parallel", async () => {
    const entry = await entryWhere(loopInParallel);
    const spans = flatten(entry.executionData.traceSpans);
    const { page, problems } = await openEntry(entry);
    const rows = page.locator(".waterfall [data-span-id]");
    await expect.poll(() => rows.count()).toBe(spans.length);
    const deepest = spans.filter((span) => /-b\d+-i\d+$/.test(span.id));
    expect(deepest.length).toBe(4);
    for (const span of deepest) {
      const lists = await page.locator(`[data-span-id="${span.id}"]`).evaluate((row) => {
        let depth = 0;
        for (let at = row.parentElement; at; at = at.parentElement) if (at.matches("ul.spans")) depth++;
        return depth;
      });
      expect(lists).toBe(3);
    }
    const box = async (selector: string) => {
      const found = await page.locator(selector).boundingBox();
      if (!found) throw new Error(`${selector} is not drawn`);
      return found;
    };
    const inside = (inner: { x: number; y: number; width: number; height: number }, outer: typeof inner) =>
      inner.x >= outer.x &&
      inner.y >= outer.y &&
      inner.x + inner.width <= outer.x + outer.width &&
      inner.y + inner.height <= outer.y + outer.height;
    const regions = await box('[data-container-id="regions"]');
    const pages = await box('[data-container-id="pages"]');
    expect(inside(pages, regions)).toBe(true);
    expect(inside(await box('.graph-node[data-block-id="summarize"]'), pages)).toBe(true);
    expect(inside(await box('.graph-node[data-block-id="fetch"]'), regions)).toBe(true);
    expect(inside(await box('.graph-node[data-block-id="respond"]'), regions)).toBe(false);
    const { ran, marked } = await graphAgainstApi(page, entry);
    expect(marked).toEqual(ran);
    await screenshot(page, "log-entry-nested");
    expect(problems).toEqual([]);
  });
});

describe("accessibility", () => {
  it("meets WCAG 2.1 AA as axe-core checks it, with every span and the final output open", async () => {
    const entry = await entryWhere([(candidate) => candidate.level === "error"], "&level=error");
    const { page, problems } = await openEntry(entry, { bypassCSP: true });
    await page.locator(".workflow-graph svg").waitFor();
    await page.getByRole("button", { name: "Expand all" }).click();
    const toggles = page.locator("button.span-toggle");
    expect(await toggles.evaluateAll((e) => e.map((b) => b.getAttribute("aria-expanded")))).toEqual(
      flatten(entry.executionData.traceSpans).map(() => "true"),
    );
    await page.getByText("Final output").click();
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  });
});

describe("an unknown entry", () => {
  it("says the API found no such entry", async () => {
    const { page, problems } = await openSignedIn(browser, flowlog.server.url, account);
    await page.goto(`${flowlog.server.url}/#/logs/log_doesnotexist?ws=${account.workspaceId}`);
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toContain("log entry log_doesnotexist not found");
    // The refused call is the browser's own 404 log line; nothing else may go wrong.
    expect(problems.filter((problem) => !problem.includes("404"))).toEqual([]);
  });
});
