import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecutionRecord, LogEntryRecord } from "../src/store/records.js";
import { levels, triggers } from "../src/store/records.js";
import { newId } from "../src/util/ids.js";
import { rest } from "./support/api-server.js";
import {
  createAccount,
  createWorkflow,
  execution,
  startFlowlog,
  steppingClock,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { type Filter, keysetOrder, matches } from "./support/log-filter-oracle.js";
import { seededRandom, walkableLimits } from "./support/random.js";

function toQuery(f: Filter): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(f)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) params.set(name, value.join(","));
    else if (name === "startDate" || name === "endDate")
      params.set(name, new Date(value as number).toISOString());
    else params.set(name, String(value));
  }
  return params.toString();
}

let flowlog: TestFlowlog;
let account: TestAccount;
let rows: LogEntryRecord[];
let workflowIds: string[];
let folderIds: string[];
const models = ["gpt-4o", "gpt-4o-mini", "claude-sonnet-4"];

beforeAll(async () => {
  flowlog = await startFlowlog({ clock: steppingClock() });
  account = await createAccount(flowlog.store);
  folderIds = [];
  for (const name of ["Reports", "Sync"]) {
    const id = newId("fld");
    await flowlog.store.workflows.createFolder({
      id,
      workspaceId: account.workspaceId,
      name,
      createdAt: Date.now(),
    });
    folderIds.push(id);
  }
  workflowIds = [
    await createWorkflow(flowlog.store, account.workspaceId, "A", folderIds[0]),
    await createWorkflow(flowlog.store, account.workspaceId, "B", folderIds[1]),
    await createWorkflow(flowlog.store, account.workspaceId, "C"),
  ];
  const random = seededRandom(20261121);
  const start = Date.parse("2026-10-01T00:00:00.000Z");
  const records: ExecutionRecord[] = [];
  for (let i = 0; i < 600; i++) {
    const workflowIndex = random.int(0, 2);
    const used = random.subset(models);
    const costs = used.map(() => random.int(0, 500) / 10_000);
    records.push(
      execution(account, workflowIds[workflowIndex] as string, {
        folderId: folderIds[workflowIndex] ?? null,
        // Coarse minutes: many executions share a startedAt.
        startedAt: start + random.int(0, 200) * 60_000,
        level: random.pick(levels),
        trigger: random.pick(triggers),
        totalDurationMs: random.int(0, 20) * 250,
        cost: {
          total: costs.reduce((sum, c) => sum + c, 0),
          tokens: { prompt: 0, completion: 0, total: 0 },
          models: Object.fromEntries(
            used.map((model, k) => [
              model,
              {
                input: 0,
                output: costs[k] ?? 0,
                total: costs[k] ?? 0,
                tokens: { prompt: 0, completion: 0, total: 0 },
              },
            ]),
          ),
        },
      }),
    );
  }
  await flowlog.store.logs.insertExecutions(records);
  rows = records.map((r) => r.entry);
});
afterAll(() => flowlog.close());

async function walk(query: string, order: "asc" | "desc", limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const path = `/api/v1/logs?workspaceId=${account.workspaceId}&order=${order}&limit=${limit}&${query}${cursor ? `&cursor=${cursor}` : ""}`;
    const response = await rest(flowlog.server.url, path, { headers: { "x-api-key": account.key } });
    expect(response.status, path).toBe(200);
    const body = response.json as { data: { id: string }[]; nextCursor?: string };
    ids.push(...body.data.map((e) => e.id));
    cursor = body.nextCursor;
  } while (cursor);
  return ids;
}

function randomFilter(random: ReturnType<typeof seededRandom>): Filter {
  const sample = () => random.pick(rows);
  const filter: Filter = {};
  if (random.chance(0.3)) filter.workflowIds = random.subset(workflowIds).concat(random.pick(workflowIds));
  if (random.chance(0.2)) filter.folderIds = [random.pick(folderIds)];
  if (random.chance(0.3)) filter.triggers = random.subset(triggers).concat(random.pick(triggers));
  if (random.chance(0.3)) filter.level = random.pick(levels);
  // Bounds taken from real rows, so inclusivity is tested at the edges.
  if (random.chance(0.3)) filter.startDate = sample().startedAt;
  if (random.chance(0.3)) filter.endDate = sample().startedAt;
  if (random.chance(0.05)) filter.executionId = sample().executionId;
  if (random.chance(0.25)) filter.minDurationMs = sample().totalDurationMs;
  if (random.chance(0.25)) filter.maxDurationMs = sample().totalDurationMs;
  if (random.chance(0.25)) filter.minCost = sample().cost.total;
  if (random.chance(0.25)) filter.maxCost = sample().cost.total;
  if (random.chance(0.25)) filter.model = random.pick(models);
  return filter;
}

describe("filters and pagination against an oracle (D8, D9)", () => {
  it("returns, page after page, exactly the matching rows in keyset order for 60 random filters", async () => {
    const random = seededRandom(7);
    for (let round = 0; round < 60; round++) {
      const filter = randomFilter(random);
      const order = random.pick(["asc", "desc"] as const);
      const expected = rows
        .filter((r) => matches(r, filter))
        .sort(keysetOrder(order))
        .map((r) => r.id);
      const limit = random.pick(walkableLimits([1, 3, 17, 100, 1000], expected.length));
      const actual = await walk(toQuery(filter), order, limit);
      expect(actual, `round ${round}: ${JSON.stringify(filter)} ${order} limit ${limit}`).toEqual(expected);
    }
  });

  it("yields every row once when rows are inserted while paging", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let page = 0;
    const inserted: string[] = [];
    do {
      const path = `/api/v1/logs?workspaceId=${account.workspaceId}&order=asc&limit=50${cursor ? `&cursor=${cursor}` : ""}`;
      const body = (await rest(flowlog.server.url, path, { headers: { "x-api-key": account.key } })).json as {
        data: { id: string }[];
        nextCursor?: string;
      };
      seen.push(...body.data.map((e) => e.id));
      cursor = body.nextCursor;
      if (page++ < 3) {
        // One row at the same startedAt as the last row seen, one far behind, one far ahead.
        const last = rows.find((r) => r.id === seen[seen.length - 1]) as LogEntryRecord;
        for (const startedAt of [last.startedAt, last.startedAt - 86_400_000, last.startedAt + 86_400_000]) {
          const extra = execution(account, workflowIds[0] as string, { startedAt });
          await flowlog.store.logs.insertExecution(extra);
          inserted.push(extra.entry.id);
        }
      }
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const row of rows) expect(seen).toContain(row.id);
  });
});
