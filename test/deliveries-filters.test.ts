import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeliveryStatus } from "../src/store/delivery-rows.js";
import { newId } from "../src/util/ids.js";
import { rest } from "./support/api-server.js";
import {
  type DeliveryQuery,
  matchesDelivery,
  newestFirst,
  type WrittenDelivery,
} from "./support/delivery-filter-oracle.js";
import {
  createAccount,
  startFlowlog,
  steppingClock,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { seededRandom, walkableLimits } from "./support/random.js";

/**
 * D40: the delivery log through the API, page after page, against an oracle of its filters and order
 * (delivery-filter-oracle.ts). The deliveries are written through the store as the worker writes them:
 * created, then each attempt recorded with the status it leaves.
 */
const eventTypes = [
  "workflow.execution.completed",
  "workflow.alert.fired",
  "workflow.alert.resolved",
  "notification.endpoint.failing",
];
const httpStatuses = [200, 204, 302, 404, 410, 429, 500, 503, null];
const start = Date.parse("2026-10-01T00:00:00.000Z");

let flowlog: TestFlowlog;
let alice: TestAccount;
let bob: TestAccount;
let subscriptionIds: string[];
let bobsSubscription: string;
let written: WrittenDelivery[];

/** One delivery with a random history: new, held, or one to three attempts that settled it or not. */
async function writeDelivery(
  account: TestAccount,
  subscriptionId: string,
  random: ReturnType<typeof seededRandom>,
  createdAt: number,
): Promise<WrittenDelivery> {
  const eventId = newId("evt");
  const eventType = random.pick(eventTypes);
  const { id } = await flowlog.store.deliveries.createOnce({
    id: newId("dlv"),
    eventId,
    eventType,
    subscriptionId,
    workspaceId: account.workspaceId,
    logId: null,
    event: { id: eventId, type: eventType },
    createdAt,
  });
  const delivery = { id, subscriptionId, eventId, eventType, createdAt };
  const history = random.int(0, 9);
  if (history === 0) return { ...delivery, status: "pending", lastHttpStatus: null };
  if (history === 1) {
    await flowlog.sql("UPDATE deliveries SET status = 'held' WHERE id = @id", { id });
    return { ...delivery, status: "held", lastHttpStatus: null };
  }
  const attempts = random.int(1, 3);
  let status: DeliveryStatus = "pending";
  let httpStatus: number | null = null;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    httpStatus = random.pick(httpStatuses);
    const delivered = httpStatus !== null && httpStatus < 300;
    const last = attempt === attempts;
    status = delivered ? "succeeded" : last && random.chance(0.8) ? "failed" : "pending";
    await flowlog.store.deliveries.recordAttempt(
      {
        deliveryId: id,
        series: 1,
        attempt,
        startedAt: createdAt + attempt * 1_000,
        durationMs: 10,
        outcome: delivered ? "succeeded" : status === "failed" ? "failed" : "retrying",
        httpStatus,
        responseSnippet: null,
        error: delivered ? null : `HTTP ${httpStatus ?? "none"}`,
      },
      status,
    );
    if (delivered) break;
  }
  return { ...delivery, status, lastHttpStatus: httpStatus };
}

beforeAll(async () => {
  flowlog = await startFlowlog({ clock: steppingClock() });
  alice = await createAccount(flowlog.store);
  bob = await createAccount(flowlog.store);
  subscriptionIds = [];
  for (const n of [1, 2, 3]) {
    subscriptionIds.push(await subscribeWebhook(flowlog.store, alice.workspaceId, `https://hooks.test/${n}`));
  }
  bobsSubscription = await subscribeWebhook(flowlog.store, bob.workspaceId, "https://hooks.test/bob");
  const random = seededRandom(20261201);
  written = [];
  for (let n = 0; n < 400; n++) {
    // Coarse minutes: many deliveries share a creation time, and are then ordered by id.
    const createdAt = start + random.int(0, 120) * 60_000;
    written.push(await writeDelivery(alice, random.pick(subscriptionIds), random, createdAt));
  }
  for (let n = 0; n < 40; n++) {
    await writeDelivery(bob, bobsSubscription, random, start + random.int(0, 120) * 60_000);
  }
});
afterAll(() => flowlog?.close());

interface ListJson {
  deliveries: { id: string; status: string; lastHttpStatus?: number }[];
  nextCursor?: string;
}

const list = (query: string, account = alice) =>
  rest(flowlog.server.url, `/api/v1/workspaces/${account.workspaceId}/deliveries?${query}`, {
    headers: { "x-api-key": account.key },
  });

function toQuery(q: DeliveryQuery): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(q)) {
    if (value === undefined) continue;
    const dated = name === "startDate" || name === "endDate";
    params.set(name, dated ? new Date(value as number).toISOString() : String(value));
  }
  return params;
}

/** Every page of a query, from the newest, following nextCursor; each page at most `limit` long. */
async function walk(q: DeliveryQuery, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const params = toQuery(q);
    params.set("limit", String(limit));
    if (cursor) params.set("cursor", cursor);
    const response = await list(params.toString());
    expect(response.status, response.text).toBe(200);
    const page = response.json as ListJson;
    expect(page.deliveries.length).toBeLessThanOrEqual(limit);
    ids.push(...page.deliveries.map((delivery) => delivery.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

function randomQuery(random: ReturnType<typeof seededRandom>): DeliveryQuery {
  const sample = () => random.pick(written);
  const q: DeliveryQuery = {};
  if (random.chance(0.3))
    q.subscriptionId = random.chance(0.1) ? bobsSubscription : random.pick(subscriptionIds);
  if (random.chance(0.3)) q.status = random.pick(["pending", "held", "succeeded", "failed"] as const);
  if (random.chance(0.05)) q.eventId = sample().eventId;
  if (random.chance(0.3)) q.eventType = random.pick(eventTypes);
  // Bounds taken from real deliveries, so that inclusivity is tested at the edges.
  if (random.chance(0.3)) q.startDate = sample().createdAt;
  if (random.chance(0.3)) q.endDate = sample().createdAt;
  if (random.chance(0.3)) q.httpStatusClass = random.pick(["2xx", "3xx", "4xx", "5xx", "none"] as const);
  return q;
}

describe("the delivery log's pages and filters against an oracle (D40)", () => {
  it("returns, page after page, exactly the matching deliveries, newest first, for 60 random filters", async () => {
    const random = seededRandom(51);
    for (let round = 0; round < 60; round++) {
      const q = randomQuery(random);
      const expected = written
        .filter((delivery) => matchesDelivery(delivery, q))
        .sort(newestFirst)
        .map((delivery) => delivery.id);
      const limit = random.pick(walkableLimits([2, 7, 33, 100, 1000], expected.length));
      expect(await walk(q, limit), `round ${round}: ${JSON.stringify(q)} limit ${limit}`).toEqual(expected);
    }
  });

  it("answers a delivery with its last attempt's HTTP status", async () => {
    const page = (await list("limit=1000")).json as ListJson;
    const byId = new Map(written.map((delivery) => [delivery.id, delivery]));
    for (const delivery of page.deliveries) {
      const truth = byId.get(delivery.id);
      expect(delivery.status).toBe(truth?.status);
      expect(delivery.lastHttpStatus ?? null).toBe(truth?.lastHttpStatus);
    }
  });

  it("pages 100 deliveries by default and 1,000 at most, with a cursor while older ones remain", async () => {
    const first = (await list("")).json as ListJson;
    expect(first.deliveries).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    const all = (await list("limit=1000")).json as ListJson;
    expect(all.deliveries).toHaveLength(written.length);
    expect(all).not.toHaveProperty("nextCursor");
  });

  it("yields every delivery once when deliveries are created while paging", async () => {
    const random = seededRandom(5151);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = (await list(`limit=50${cursor ? `&cursor=${cursor}` : ""}`)).json as ListJson;
      seen.push(...page.deliveries.map((delivery) => delivery.id));
      cursor = page.nextCursor;
      if (pages++ < 3) {
        // One at the creation time of the last delivery seen, one far older, one far newer.
        const last = written.find((delivery) => delivery.id === seen.at(-1)) as WrittenDelivery;
        for (const createdAt of [last.createdAt, last.createdAt - 86_400_000, last.createdAt + 86_400_000]) {
          await writeDelivery(alice, random.pick(subscriptionIds), random, createdAt);
        }
      }
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const delivery of written) expect(seen).toContain(delivery.id);
  });
});

describe("the delivery log refuses what it cannot read, naming the field (D40)", () => {
  it.each([
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    ["status=lost", "status"],
    ["httpStatusClass=6xx", "httpStatusClass"],
    ["eventType=Workflow%20completed", "eventType"],
    ["startDate=2026-02-30", "startDate"],
    ["endDate=yesterday", "endDate"],
    ["cursor=not-a-cursor", "cursor"],
    // A cursor of the logs API is no cursor of the delivery log.
    [
      `cursor=${Buffer.from(JSON.stringify({ s: 1, i: "log_1", o: "desc" })).toString("base64url")}`,
      "cursor",
    ],
  ])("%s is 400 invalid_argument naming %s", async (query, field) => {
    const refused = await list(query);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json).toMatchObject({ code: "invalid_argument", errors: [{ field }] });
  });

  it("another workspace's cursor reads that workspace's deliveries no further than its own", async () => {
    const alicesCursor = ((await list("limit=1")).json as ListJson).nextCursor as string;
    const page = (await list(`limit=1000&cursor=${alicesCursor}`, bob)).json as ListJson;
    const bobs = (await list("limit=1000", bob)).json as ListJson;
    expect(page.deliveries.length).toBeGreaterThan(0);
    for (const delivery of page.deliveries) expect(bobs.deliveries.map((d) => d.id)).toContain(delivery.id);
  });
});
