import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { h2Requests } from "./support/http2-burst.js";
import { type PostgresServer, startPostgres } from "./support/postgres.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";

/**
 * Issue 15 (D32): several `flowlog serve` processes on one PostgreSQL database are one service. Real
 * processes, started as an operator starts them: FLOWLOG_DATABASE_URL and the shared FLOWLOG_MASTER_KEY.
 */

const repoRoot = path.resolve(import.meta.dirname, "..");
const run = promisify(execFile);
const burst = 12;
const operatorToken = "operator-token-for-the-processes-test";

let postgres: PostgresServer;
let env: Record<string, string>;
let servers: ServeProcess[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  env = {
    FLOWLOG_DATABASE_URL: await postgres.createDatabase(),
    FLOWLOG_MASTER_KEY: randomBytes(32).toString("base64"),
    FLOWLOG_OPERATOR_TOKEN: operatorToken,
    // A bucket small enough to empty, refilled too slowly to matter during the test.
    FLOWLOG_PLAN_LIMITS: JSON.stringify({ pro: { api: { requestsPerMinute: 1, maxBurst: burst } } }),
  };
  servers = await Promise.all([1, 2, 3].map(() => startServeProcess(env)));
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await postgres?.stop();
});

/** `flowlog <args>` as a separate process on the same database, as an operator runs the CLI. */
async function cli(...args: string[]): Promise<unknown> {
  const { stdout } = await run(process.execPath, ["bin/flowlog.js", ...args, "--json"], {
    cwd: repoRoot,
    env: { ...process.env, ...env, FLOWLOG_LOG_LEVEL: "warn" },
  });
  return JSON.parse(stdout);
}

interface Bootstrapped {
  user: { id: string };
  workspace: { id: string };
  apiKey: { id: string };
  key: string;
}

const logsOf = (server: ServeProcess, account: Bootstrapped) =>
  fetch(`${server.url}/api/v1/logs?workspaceId=${account.workspace.id}`, {
    headers: { "x-api-key": account.key },
  });

describe("flowlog serve processes sharing one PostgreSQL database (issue 15, D32)", () => {
  it("a key made by the CLI works on every process, and the plan's API bucket is one bucket for all of them", async () => {
    const account = (await cli("bootstrap", "--plan", "pro")) as Bootstrapped;
    const statuses: number[] = [];
    // Round-robin, several at once, as a load balancer spreads one client's requests.
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, n) => logsOf(servers[n % servers.length] as ServeProcess, account)),
      );
      statuses.push(...answers.map((answer) => answer.status));
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(burst);
    expect(statuses.filter((status) => status === 429)).toHaveLength(24 - burst);
    const refused = await logsOf(servers[0] as ServeProcess, account);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ status: 429, code: "resource_exhausted" });
  });

  it("flowlog seed writes into the database, and every process lists what it wrote", async () => {
    const account = (await cli("bootstrap", "--plan", "pro")) as Bootstrapped;
    await run(
      process.execPath,
      ["bin/flowlog.js", "seed", "--workspace", account.workspace.id, "--executions", "30", "--seed", "pg"],
      { cwd: repoRoot, env: { ...process.env, ...env, FLOWLOG_LOG_LEVEL: "warn" } },
    );
    for (const server of servers) {
      const page = await fetch(`${server.url}/api/v1/logs?workspaceId=${account.workspace.id}&limit=100`, {
        headers: { "x-api-key": account.key },
      });
      expect(page.status).toBe(200);
      expect(((await page.json()) as { data: unknown[] }).data).toHaveLength(30);
    }
  });

  it("a wrong or unreachable FLOWLOG_DATABASE_URL stops flowlog serve at start with one line, password masked", async () => {
    const start = (url: string) =>
      run(process.execPath, ["bin/flowlog.js", "serve"], {
        cwd: repoRoot,
        env: { ...process.env, ...env, PORT: "0", FLOWLOG_DATABASE_URL: url },
        timeout: 30_000,
      }).then(
        () => ({ code: 0, stderr: "" }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
    const closedPort = new URL(env.FLOWLOG_DATABASE_URL as string);
    closedPort.port = "1";
    closedPort.password = "hunter2-secret";
    for (const url of ["mysql://flowlog:hunter2-secret@db/flowlog", closedPort.href]) {
      const { code, stderr } = await start(url);
      expect(code).toBe(2);
      const lines = stderr.trim().split("\n");
      expect(lines, stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^FLOWLOG_DATABASE_URL=\S*:\*\*\*@/);
      expect(stderr).not.toContain("hunter2-secret");
    }
  });

  it("a key revoked through one process is refused by the others' next request", async () => {
    const account = (await cli("bootstrap", "--plan", "pro")) as Bootstrapped;
    const [first, second, third] = servers as [ServeProcess, ServeProcess, ServeProcess];
    expect((await logsOf(second, account)).status).toBe(200);
    expect((await logsOf(third, account)).status).toBe(200);
    const revoked = await fetch(`${first.url}/api/v1/admin/api-keys/${account.apiKey.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${operatorToken}` },
    });
    expect(revoked.status, await revoked.text()).toBe(200);
    expect((await logsOf(second, account)).status).toBe(401);
    expect((await logsOf(third, account)).status).toBe(401);
  });

  it("looks at no more than 20 wrong keys of an address sent at once, yet lets 60 right ones in (D26)", async () => {
    // A key lookup in PostgreSQL is a round trip, so 60 streams are all being authenticated at once: counted
    // only as they failed, all 60 guesses would be looked up.
    const account = (await cli("bootstrap", "--plan", "enterprise")) as Bootstrapped;
    const server = servers[2] as ServeProcess;
    const path = `/api/v1/logs?workspaceId=${account.workspace.id}&limit=1`;
    const guesses = await h2Requests(server.url, "127.0.0.55", 60, {
      ":path": path,
      "x-api-key": "flk_guessed",
    });
    const count = (status: number) => guesses.filter((answer) => answer === status).length;
    expect({ tried: count(401), throttled: count(429) }).toEqual({ tried: 20, throttled: 40 });
    // A client that fails nothing is never refused for having more than 20 authentications in flight.
    const rightKeys = await h2Requests(server.url, "127.0.0.56", 60, {
      ":path": path,
      "x-api-key": account.key,
    });
    expect(rightKeys).toEqual(Array(60).fill(200));
  });

  it("while the database is down the API answers 503 and /readyz names the store; both recover without a restart", async () => {
    const account = (await cli("bootstrap", "--plan", "pro")) as Bootstrapped;
    const server = servers[1] as ServeProcess;
    await postgres.pause();
    try {
      const answer = await logsOf(server, account);
      expect(answer.status).toBe(503);
      const body = JSON.stringify(await answer.json());
      expect(body).toContain("unavailable");
      // Neither the database's address nor its password is shown to a client.
      expect(body).not.toContain("127.0.0.1");
      expect(body).not.toContain("postgres://");
      const ready = await fetch(`${server.probeUrl}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({
        status: "unready",
        failed: expect.arrayContaining(["store"]),
      });
    } finally {
      await postgres.resume();
    }
    await expect.poll(async () => (await logsOf(server, account)).status, { timeout: 20_000 }).toBe(200);
    // D46: readiness is computed at most once a second and shared, so it may still say unready that long.
    await expect
      .poll(async () => (await fetch(`${server.probeUrl}/readyz`)).status, { timeout: 5_000 })
      .toBe(200);
  });
});
