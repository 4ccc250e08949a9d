import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseFile } from "../src/store/database.js";
import { openSqlite } from "../src/store/sqlite-addon.js";
import { openStore, type Store } from "../src/store/store.js";
import { rest } from "./support/api-server.js";
import {
  createAccount,
  offlineWorkflowState,
  startFlowlog,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";

// Issue 13: the API process caches keys and memberships; a change made by another process (the CLI, a
// second `flowlog serve`) must take effect from the first request after it commits, under load too.

let flowlog: TestFlowlog;
/** Another process's connection to the same file. */
let other: Store;

beforeAll(async () => {
  flowlog = await startFlowlog();
  other = openStore({ dataDir: flowlog.dataDir });
});
afterAll(async () => {
  await other?.close();
  await flowlog?.close();
});

const listLogs = (account: TestAccount) =>
  rest(flowlog.server.url, `/api/v1/logs?workspaceId=${account.workspaceId}&limit=1`, {
    headers: { "x-api-key": account.key },
  });

/**
 * Requests in a closed loop from `workers` callers around a change: those answered before the change began
 * and those sent after it committed (requests in flight across it may go either way).
 */
async function underLoad(account: TestAccount, change: () => void, workers = 8) {
  const answers: { sentAt: number; answeredAt: number; status: number }[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      const sentAt = performance.now();
      const { status } = await listLogs(account);
      answers.push({ sentAt, answeredAt: performance.now(), status });
    }
  };
  const loops = Array.from({ length: workers }, loop);
  // Enough answers on each side, however slow the machine.
  const enough = async (count: () => number) => {
    const deadline = Date.now() + 10_000;
    while (count() < 20 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  await enough(() => answers.length);
  const changeStartedAt = performance.now();
  change();
  const committedAt = performance.now();
  await enough(() => answers.filter((a) => a.sentAt > committedAt).length);
  running = false;
  await Promise.all(loops);
  return {
    before: answers.filter((a) => a.answeredAt < changeStartedAt).map((a) => a.status),
    after: answers.filter((a) => a.sentAt > committedAt).map((a) => a.status),
  };
}

describe("Keys and memberships cached by the API process (issue 13)", () => {
  it("a member removed by another process is refused (403) by every request sent after the change commits", async () => {
    const bob = await createAccount(flowlog.store);
    const db = openSqlite(databaseFile(flowlog.dataDir));
    try {
      const { before, after } = await underLoad(bob, () => {
        db.prepare("DELETE FROM memberships WHERE user_id = ? AND workspace_id = ?").run(
          bob.userId,
          bob.workspaceId,
        );
      });
      expect(new Set(before)).toEqual(new Set([200]));
      expect(after.length).toBeGreaterThan(10);
      expect(new Set(after)).toEqual(new Set([403]));
    } finally {
      db.close();
    }
  });

  /** Removes the account's user from its workspaces through another connection, as another process would. */
  function removeElsewhere(account: TestAccount): void {
    const db = openSqlite(databaseFile(flowlog.dataDir));
    try {
      db.prepare("DELETE FROM memberships WHERE user_id = ?").run(account.userId);
    } finally {
      db.close();
    }
  }

  /** A member whom this process has cached as one, then removed by another process. */
  async function removedElsewhere(): Promise<TestAccount> {
    const account = await createAccount(flowlog.store);
    expect(await flowlog.store.accounts.isMember(account.userId, account.workspaceId)).toBe(true);
    removeElsewhere(account);
    return account;
  }

  it("a membership checked without a key lookup's look (a schedule, an inbound webhook) looks for itself", async () => {
    const frank = await removedElsewhere();
    expect(await flowlog.store.accounts.isMember(frank.userId, frank.workspaceId)).toBe(false);
  });

  it("a member removed while their request's body is still arriving is refused: admission is not membership", async () => {
    const grace = await createAccount(flowlog.store);
    expect((await listLogs(grace)).status).toBe(200);
    const body = JSON.stringify({ name: "Sent slowly", state: offlineWorkflowState });
    const { port } = new URL(flowlog.server.url);
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(
        {
          host: "127.0.0.1",
          port,
          method: "POST",
          path: `/api/v1/workspaces/${grace.workspaceId}/workflows`,
          headers: {
            "x-api-key": grace.key,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        },
        (response) => {
          let text = "";
          response.setEncoding("utf8").on("data", (chunk: string) => {
            text += chunk;
          });
          response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
        },
      );
      request.on("error", reject);
      // The headers and half the body: the server authenticates and takes the token from the headers (D28),
      // then waits for the rest.
      request.write(body.slice(0, body.length / 2));
      setTimeout(() => {
        removeElsewhere(grace);
        request.end(body.slice(body.length / 2));
      }, 300);
    });
    const { status, body: text } = await answer;
    expect({ status, code: JSON.parse(text).code }).toEqual({ status: 403, code: "permission_denied" });
    expect(await flowlog.store.workflows.listWorkflows(grace.workspaceId)).toEqual([]);
  });

  it("an API execution by a member removed by another process is refused: the workflow is not found (D10)", async () => {
    const carol = await createAccount(flowlog.store);
    const created = await rest(flowlog.server.url, `/api/v1/workspaces/${carol.workspaceId}/workflows`, {
      method: "POST",
      headers: { "x-api-key": carol.key, "content-type": "application/json" },
      body: JSON.stringify({ name: "Removed member's workflow", state: offlineWorkflowState }),
    });
    expect(created.status).toBe(200);
    const workflowId = (created.json as { workflow: { id: string } }).workflow.id;
    // Cached as a member by this process, then removed elsewhere.
    expect((await listLogs(carol)).status).toBe(200);
    removeElsewhere(carol);
    const executed = await rest(flowlog.server.url, `/api/v1/workflows/${workflowId}/execute`, {
      method: "POST",
      headers: { "x-api-key": carol.key, "content-type": "application/json" },
      body: JSON.stringify({ async: true }),
    });
    expect(executed.status).toBe(404);
    expect(executed.json).toMatchObject({ code: "not_found", detail: `workflow ${workflowId} not found` });
  });

  it("a key revoked through the process's own connection is refused at once too", async () => {
    const carol = await createAccount(flowlog.store);
    expect((await listLogs(carol)).status).toBe(200);
    await flowlog.store.accounts.revokeApiKey(carol.keyId, Date.now());
    expect((await listLogs(carol)).status).toBe(401);
  });

  it("a member added by another process is let in at once (no refusal is cached past the change)", async () => {
    const dave = await createAccount(flowlog.store);
    const erin = await createAccount(flowlog.store);
    const intoErins = () =>
      rest(flowlog.server.url, `/api/v1/logs?workspaceId=${erin.workspaceId}&limit=1`, {
        headers: { "x-api-key": dave.key },
      });
    expect((await intoErins()).status).toBe(403);
    await other.accounts.addMember(erin.workspaceId, dave.userId);
    expect((await intoErins()).status).toBe(200);
  });

  // Last: the failed authentications it provokes throttle the test client's address.
  it("a key revoked by another process is refused by every request sent after the revocation commits", async () => {
    const alice = await createAccount(flowlog.store);
    const { before, after } = await underLoad(alice, async () => {
      expect(await other.accounts.revokeApiKey(alice.keyId, Date.now())).toBe(true);
    });
    expect(before.length).toBeGreaterThan(10);
    expect(new Set(before)).toEqual(new Set([200]));
    // Refused as unauthenticated, and soon throttled as repeated failures (429); never let in.
    expect(after.length).toBeGreaterThan(10);
    expect(after).toContain(401);
    expect(after.filter((status) => status !== 401 && status !== 429)).toEqual([]);
  });
});
