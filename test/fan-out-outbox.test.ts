import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@temporalio/client";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPostgresStore } from "../src/store/postgres/store.js";
import type { Store } from "../src/store/store.js";
import { FanOutOutbox } from "../src/temporal/fan-out-outbox.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { untilTrue } from "./support/until.js";

/**
 * A deliveries worker stops when told (SIGTERM, a cluster's supervisor), and its outbox dispatcher with it:
 * a stop that comes while the dispatcher waits for the store must not be missed. On PostgreSQL the store
 * answers asynchronously, so the stop can land in that wait; another session's lock on the outbox table
 * holds the dispatcher there for as long as the test needs.
 */

const server = sharedPostgres();

let url: string;
let store: Store;
let locker: pg.Client;

beforeEach(async () => {
  url = await server.createDatabase();
  store = await openPostgresStore(url, randomBytes(32));
  locker = new pg.Client({ connectionString: url });
  await locker.connect();
});

afterEach(async () => {
  await locker.end();
  await store.close();
});

/** Whether a statement of the store's waits for a lock (the locker's): one `statement` matches. */
async function waitingOnTheOutbox(statement: RegExp): Promise<boolean> {
  // Inside the locker's transaction the activity view keeps its first snapshot unless told to drop it.
  await locker.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await locker.query<{ query: string }>(
    `SELECT query FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
  );
  return rows.some((row) => statement.test(row.query));
}

/** The dispatcher's run, or a clear failure when it has not ended `withinMs` after the stop. */
async function ended(run: Promise<void>, withinMs: number): Promise<string> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      run.then(() => "stopped"),
      sleep(withinMs, undefined, { signal: timer.signal }).then(
        () => `still running ${withinMs} ms after the stop`,
        () => "the race was over",
      ),
    ]);
  } finally {
    timer.abort();
  }
}

describe("the notification outbox's dispatcher (issue 51)", () => {
  // Neither case starts a workflow (the outbox is empty): the client never connects.
  const dispatcher = () =>
    new FanOutOutbox(store, new Client(), async () => [], { idleMs: 50, retryMs: 5_000 });

  it("stops when told while it claims intents from the store", async () => {
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE notification_outbox IN ACCESS EXCLUSIVE MODE");
    const stop = new AbortController();
    const run = dispatcher().run(stop.signal);
    await untilTrue(() => waitingOnTheOutbox(/^UPDATE notification_outbox/), 10_000);
    stop.abort();
    await locker.query("COMMIT");
    expect(await ended(run, 10_000)).toBe("stopped");
  });

  it("stops when told while it looks for the next intent due", async () => {
    const stop = new AbortController();
    const run = dispatcher().run(stop.signal);
    // Its first claim found nothing; from now on it looks every 50 ms, with a read.
    await sleep(200);
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE notification_outbox IN ACCESS EXCLUSIVE MODE");
    await untilTrue(() => waitingOnTheOutbox(/^SELECT min\(not_before\)/), 10_000);
    stop.abort();
    await locker.query("COMMIT");
    expect(await ended(run, 10_000)).toBe("stopped");
  });
});
