import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../src/store/store.js";
import { newId } from "../src/util/ids.js";
import { createAccount, subscribeWebhook } from "./support/flowlog.js";

const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-concurrency-"));
const file = path.join(dataDir, "flowlog.sqlite");
const store = openStore({ file });
let writer: ChildProcess | undefined;

afterAll(() => {
  writer?.kill();
  store.close();
});

/**
 * Another process committing small writes to the same file as fast as it can, as the API server does
 * with its token buckets while the worker records deliveries (D23: processes share one file).
 */
function startWriter(): Promise<ChildProcess> {
  const script = `
    const db = new (require("better-sqlite3"))(process.argv[1]);
    db.pragma("busy_timeout = 5000");
    const take = db.prepare("INSERT INTO rate_limit_buckets VALUES ('other-process', 1, ?, ?) " +
      "ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at");
    process.stdout.write("ready\\n");
    for (;;) take.run(Date.now(), Date.now());
  `;
  const child = spawn(process.execPath, ["-e", script, file], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.stdout?.once("data", () => resolve(child));
  });
}

describe("writes that read first take the write lock first (D23)", () => {
  it("records every delivery attempt while another process commits to the same file", async () => {
    const account = createAccount(store);
    const subscriptionId = await subscribeWebhook(
      store,
      account.workspaceId,
      "https://receiver.example.test/hooks",
    );
    writer = await startWriter();
    const failures: string[] = [];
    const deadline = Date.now() + 3_000;
    let recorded = 0;
    while (Date.now() < deadline) {
      const delivery = await store.deliveries.createOnce({
        id: newId("dlv"),
        eventId: newId("evt"),
        eventType: "workflow.execution.completed",
        subscriptionId,
        workspaceId: account.workspaceId,
        logId: null,
        event: { id: "evt", type: "workflow.execution.completed", timestamp: 0, data: {} },
        createdAt: Date.now(),
      });
      try {
        // A deferred transaction that reads before it writes fails at once ("database is locked") when
        // another connection commits in between, instead of waiting its turn: the attempt is lost.
        await store.deliveries.recordAttempt(
          {
            deliveryId: delivery.id,
            series: 1,
            attempt: 1,
            startedAt: Date.now(),
            durationMs: 1,
            outcome: "succeeded",
            httpStatus: 204,
            responseSnippet: null,
            error: null,
          },
          "succeeded",
        );
        recorded++;
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    expect(failures).toEqual([]);
    expect(recorded).toBeGreaterThan(50);
  }, 30_000);
});
