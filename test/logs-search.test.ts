import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ListLogsRequestSchema, LogsService } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import type { ExecutionRecord, LogEntryRecord } from "../src/store/records.js";
import { levels, triggers } from "../src/store/records.js";
import { rest, restWithKey, rpcClients } from "./support/api-server.js";
import { openEventStream } from "./support/event-stream.js";
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
import { seededRandom } from "./support/random.js";

/**
 * D45's search through the API, held to a brute-force oracle: the entries' texts split plainly into
 * words in JS, and a query's words each found whole or, with `*`, as a word's start.
 */

const vocabulary = [
  "timeout",
  "timed",
  "timer",
  "invoice",
  "invoices",
  "payment",
  "refused",
  "connection",
  "quota",
  "exceeded",
  "café",
  "crème",
  "straße",
  "near",
  "and",
  "not",
  "ok",
  "retry",
  "retries",
  "east",
  "eastern",
  "42",
  "4242",
];
/** Texts whose punctuation both stores must read as separators only. */
const punctuated = [
  "connect ECONNREFUSED 127.0.0.1:5432",
  "user@example.com bounced",
  "quota-exceeded (402)",
  '"quoted" NEAR/3 text',
  "a:b & c | !d",
  "Café CRÈME",
  "v1.2.3-rc.1",
];
const blockNames = ["Fetch Orders", "Send Invoice", "Score Lead", "Retry Payment", "Notify Slack"];
const workflowNames = ["Invoice sync", "Payment retry", "Lead scoring"];

/** What an entry is found by, as the oracle reads it: every text the API promises to search. */
function textsOf(entry: LogEntryRecord, workflowName: string): string[] {
  const texts = [workflowName];
  const spans = [...(entry.traceSpans as { name: string; error?: string; children?: unknown[] }[])];
  for (let span = spans.pop(); span; span = spans.pop()) {
    texts.push(span.name, span.error ?? "");
    spans.push(...((span.children ?? []) as typeof spans));
  }
  const values: unknown[] = [entry.finalOutput];
  for (let value = values.pop(); value !== undefined; value = values.pop()) {
    if (typeof value === "string") texts.push(value);
    else if (value !== null && typeof value === "object") values.push(...Object.values(value));
  }
  return texts;
}

function wordsOf(texts: string[]): Set<string> {
  return new Set(texts.flatMap((text) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u)).filter(Boolean));
}

/** The oracle of q: each of its words (split as the texts are), whole or, followed by `*`, as a prefix. */
function matchesQ(words: Set<string>, q: string): boolean {
  const terms = [...q.toLowerCase().matchAll(/([\p{L}\p{N}]+)(\*?)/gu)];
  return terms.every(([, word, star]) =>
    star ? [...words].some((w) => w.startsWith(word as string)) : words.has(word as string),
  );
}

let flowlog: TestFlowlog;
let account: TestAccount;
let rows: { entry: LogEntryRecord; words: Set<string> }[];

beforeAll(async () => {
  flowlog = await startFlowlog({ clock: steppingClock() });
  account = await createAccount(flowlog.store);
  const workflows = await Promise.all(
    workflowNames.map(async (name) => ({
      name,
      id: await createWorkflow(flowlog.store, account.workspaceId, name),
    })),
  );
  const random = seededRandom(45);
  const phrase = () =>
    Array.from({ length: random.int(1, 4) }, () =>
      random.chance(0.2) ? random.pick(punctuated) : random.pick(vocabulary),
    ).join(random.pick([" ", ", ", "; ", " - "]));
  const start = Date.parse("2026-10-01T00:00:00.000Z");
  const records: ExecutionRecord[] = [];
  rows = [];
  for (let i = 0; i < 400; i++) {
    const workflow = random.pick(workflows);
    const failed = random.chance(0.3);
    const record = execution(account, workflow.id, {
      startedAt: start + random.int(0, 300) * 60_000,
      level: failed ? "error" : "info",
      trigger: random.pick(triggers),
      traceSpans: random.subset(blockNames).map((name, k) => ({
        id: `span_${k}`,
        name,
        type: "api",
        status: "success",
        ...(random.chance(0.3) ? { error: phrase() } : {}),
        // Inputs and outputs of blocks are not searched: only their names and errors.
        input: { secretWord: "unsearchedinput" },
        children: random.chance(0.3)
          ? [{ id: `span_${k}_c`, name: random.pick(blockNames), children: [] }]
          : [],
      })),
      finalOutput: failed
        ? { error: phrase() }
        : random.pick([null, 7, phrase(), { result: phrase(), items: [phrase(), { note: phrase() }] }]),
    });
    records.push(record);
    rows.push({ entry: record.entry, words: wordsOf(textsOf(record.entry, workflow.name)) });
  }
  await flowlog.store.logs.insertExecutions(records);
});
afterAll(() => flowlog.close());

function expected(q: string, filter: Filter, order: "asc" | "desc"): string[] {
  return rows
    .filter((row) => matchesQ(row.words, q) && matches(row.entry, filter))
    .map((row) => row.entry)
    .sort(keysetOrder(order))
    .map((entry) => entry.id);
}

function query(q: string, filter: Filter): string {
  const params = new URLSearchParams({ workspaceId: account.workspaceId, q });
  if (filter.level) params.set("level", filter.level);
  if (filter.triggers) params.set("triggers", filter.triggers.join(","));
  if (filter.startDate !== undefined) params.set("startDate", new Date(filter.startDate).toISOString());
  if (filter.endDate !== undefined) params.set("endDate", new Date(filter.endDate).toISOString());
  return params.toString();
}

/** Every page of the list for q and the filter, followed by its cursor. */
async function walk(q: string, filter: Filter, order: "asc" | "desc", limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const path = `/api/v1/logs?${query(q, filter)}&order=${order}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`;
    const response = await rest(flowlog.server.url, path, { headers: { "x-api-key": account.key } });
    expect(response.status, `${path}: ${response.text}`).toBe(200);
    const body = response.json as { data: { id: string }[]; nextCursor?: string };
    ids.push(...body.data.map((e) => e.id));
    cursor = body.nextCursor;
  } while (cursor);
  return ids;
}

function randomQ(random: ReturnType<typeof seededRandom>): string {
  const words = [...random.pick(rows).words];
  return Array.from({ length: random.int(1, 3) }, () => {
    const word = random.chance(0.8) ? random.pick(words) : random.pick(vocabulary);
    return random.chance(0.3) ? `${word.slice(0, random.int(1, word.length))}*` : word;
  }).join(" ");
}

function randomFilter(random: ReturnType<typeof seededRandom>): Filter {
  const filter: Filter = {};
  if (random.chance(0.3)) filter.level = random.pick(levels);
  if (random.chance(0.3)) filter.triggers = [random.pick(triggers), random.pick(triggers)];
  if (random.chance(0.3)) filter.startDate = random.pick(rows).entry.startedAt;
  if (random.chance(0.3)) filter.endDate = random.pick(rows).entry.startedAt;
  return filter;
}

describe("q on ListLogs (D45)", () => {
  it("gives, page after page, exactly the entries a brute-force scan of their words finds, for 80 random queries and filters", async () => {
    const random = seededRandom(4545);
    let found = 0;
    for (let round = 0; round < 80; round++) {
      const q = randomQ(random);
      const filter = randomFilter(random);
      const order = random.pick(["asc", "desc"] as const);
      const limit = random.pick([5, 50, 1000]);
      const want = expected(q, filter, order);
      found += want.length;
      expect(await walk(q, filter, order, limit), `round ${round}: q=${q} ${JSON.stringify(filter)}`).toEqual(
        want,
      );
    }
    // The queries are drawn from the entries' own words: most find something.
    expect(found).toBeGreaterThan(500);
  });

  it("finds words in the workflow name, block names, span errors and the final output, not in block inputs", async () => {
    for (const q of ["invoice sync", "notify", "econnrefused", "example com", "café", "CRÈME", "retr*"]) {
      const want = expected(q, {}, "desc");
      expect(want.length, q).toBeGreaterThan(0);
      expect(await walk(q, {}, "desc", 1000), q).toEqual(want);
    }
    expect(await walk("unsearchedinput", {}, "desc", 100)).toEqual([]);
  });

  it("reads quotes, operators and punctuation of FTS5 and tsquery as separators only", async () => {
    const hostile = [
      '"timeout',
      "timeout\"'",
      "NEAR(timeout quota)",
      "timeout NOT quota",
      "timeout OR quota",
      "-timeout",
      "a:b",
      "quota & exceeded | !refused",
      "(invoice) ^payment",
      "time*out",
      "'quota':*",
      "127.0.0.1:5432",
      "\\timeout\\",
      "🔥timeout🔥",
    ];
    for (const q of hostile) {
      expect(await walk(q, {}, "desc", 1000), q).toEqual(expected(q, {}, "desc"));
    }
  });

  it("refuses a q over 200 characters, without a word, with a word no entry can hold or with NUL, naming q (400)", async () => {
    for (const q of [
      "b".repeat(101),
      "x ".repeat(100).concat("y"),
      "***",
      '"" - : & | !',
      " ",
      "invoice\u0000sync",
    ]) {
      const response = await rest(flowlog.server.url, `/api/v1/logs?${query(q, {})}`, {
        headers: { "x-api-key": account.key },
      });
      expect(response.status, q).toBe(400);
      const problem = response.json as { errors: { field: string; message: string }[] };
      expect(
        problem.errors.map((e) => e.field),
        q,
      ).toEqual(["q"]);
    }
    const longest = "timeout ".repeat(25).trim().padEnd(200, "x");
    expect(longest.length).toBe(200);
    expect(
      (
        await rest(flowlog.server.url, `/api/v1/logs?${query(longest, {})}`, {
          headers: { "x-api-key": account.key },
        })
      ).status,
    ).toBe(200);
  });

  it("answers the same on every RPC protocol as on REST", async () => {
    const q = "timeout* payment";
    const want = expected(q, {}, "desc").slice(0, 100);
    expect(want.length).toBeGreaterThan(0);
    for (const [protocol, client] of rpcClients(LogsService, flowlog.server.url)) {
      const answer = await client.listLogs(
        create(ListLogsRequestSchema, { workspaceId: account.workspaceId, q, limit: 100 }),
        { headers: { "x-api-key": account.key } },
      );
      expect(
        answer.data.map((e) => e.id),
        protocol,
      ).toEqual(want);
    }
  });
});

describe("q on GetLogStats, DeleteLogs and TailLogs (D45)", () => {
  it("counts in the stats exactly the entries the search finds", async () => {
    const q = "quota";
    const path = `/api/v1/log-stats?workspaceId=${account.workspaceId}&q=${q}&startDate=2026-10-01T00:00:00Z&endDate=2026-10-01T06:00:00Z`;
    const response = await rest(flowlog.server.url, path, { headers: { "x-api-key": account.key } });
    expect(response.status, response.text).toBe(200);
    const hours = (response.json as { hours: { executions: number; errors: number }[] }).hours;
    const want = rows.filter((row) => matchesQ(row.words, q));
    expect(hours.reduce((sum, h) => sum + h.executions, 0)).toBe(want.length);
    expect(hours.reduce((sum, h) => sum + h.errors, 0)).toBe(
      want.filter((r) => r.entry.level === "error").length,
    );
  });

  it("streams only the entries written after it opened that q finds", async () => {
    const url = `${flowlog.server.url}/api/v1/logs:tail?workspaceId=${account.workspaceId}&q=${encodeURIComponent("zebra* quota")}`;
    const stream = await openEventStream(url, { "x-api-key": account.key });
    expect(stream.status).toBe(200);
    await stream.next();
    const workflowId = rows[0]?.entry.workflowId as string;
    const found = execution(account, workflowId, { finalOutput: { note: "Zebras exceeded their quota" } });
    const other = execution(account, workflowId, { finalOutput: { note: "zebras only" } });
    const alsoFound = execution(account, workflowId, { finalOutput: "quota of zebra" });
    for (const record of [found, other, alsoFound]) await flowlog.store.logs.insertExecution(record);
    const ids = [];
    for (let i = 0; i < 2; i++) {
      ids.push((JSON.parse((await stream.next()).data as string) as { entry: { id: string } }).entry.id);
    }
    expect(ids).toEqual([found.entry.id, alsoFound.entry.id]);
    stream.close();
  });

  it("deletes with q only the entries the search finds, and refuses a q without a word", async () => {
    const other = await createAccount(flowlog.store);
    const workflowId = await createWorkflow(flowlog.store, other.workspaceId, "Cleanup");
    const doomed = execution(other, workflowId, { finalOutput: { error: "gateway timeout" } });
    const kept = execution(other, workflowId, { finalOutput: { error: "gateway refused" } });
    await flowlog.store.logs.insertExecutions([doomed, kept]);
    const path = `/api/v1/workspaces/${other.workspaceId}/logs:delete`;
    const refused = await restWithKey(flowlog.server.url, other.key, "POST", path, { q: "--" });
    expect(refused.status).toBe(400);
    expect((refused.json as { errors: { field: string }[] }).errors.map((e) => e.field)).toEqual(["q"]);
    const preview = await restWithKey(flowlog.server.url, other.key, "POST", path, {
      q: "timeout",
      preview: true,
    });
    expect((preview.json as { entries: number }).entries).toBe(1);
    const deleted = await restWithKey(flowlog.server.url, other.key, "POST", path, { q: "timeout" });
    expect((deleted.json as { entries: number }).entries).toBe(1);
    const left = await rest(flowlog.server.url, `/api/v1/logs?workspaceId=${other.workspaceId}`, {
      headers: { "x-api-key": other.key },
    });
    expect((left.json as { data: { id: string }[] }).data.map((e) => e.id)).toEqual([kept.entry.id]);
    const gone = await rest(flowlog.server.url, `/api/v1/logs?workspaceId=${other.workspaceId}&q=timeout`, {
      headers: { "x-api-key": other.key },
    });
    expect((gone.json as { data: unknown[] }).data).toEqual([]);
  });
});
