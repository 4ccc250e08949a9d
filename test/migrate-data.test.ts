import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultPlanLimits } from "../src/limits/plans.js";
import { generateExecutions } from "../src/seed/generate.js";
import { Random } from "../src/seed/random.js";
import { copiedTables } from "../src/store/postgres/copy-from-sqlite.js";
import { openPostgres } from "../src/store/postgres/database.js";
import type { ExecutionRecord } from "../src/store/records.js";
import { openStore } from "../src/store/store.js";
import { type PostgresServer, startPostgres } from "./support/postgres.js";

const cli = fileURLToPath(new URL("../bin/flowlog.js", import.meta.url));
/** Seeded demo runs, which bill no one, and runs billed to the member, which fill usage_periods (D12). */
const seededRuns = 1_150;
const billedRuns = 50;
const executions = seededRuns + billedRuns;

let server: PostgresServer;
let dataDir: string;
let env: NodeJS.ProcessEnv;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const flowlog = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
  new Promise<Run>((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
      { env: { ...env, ...extraEnv }, timeout: 120_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });

/** `flowlog migrate-data` into `url`, named as docs/configuration.md says: in FLOWLOG_DATABASE_URL, never on the command line. */
const migrateInto = (url: string, args: string[] = [], extraEnv: NodeJS.ProcessEnv = {}) =>
  flowlog(["migrate-data", ...args], { FLOWLOG_DATABASE_URL: url, ...extraEnv });

/** Row counts of every copied table, read through a connection of the test's own. */
async function countsIn(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const counts: Record<string, number> = {};
    for (const { name } of copiedTables) {
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`);
      counts[name] = Number(rows[0]?.n);
    }
    return counts;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  server = await startPostgres();
  dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-migrate-"));
  env = { ...process.env, FLOWLOG_DATA_DIR: dataDir, FLOWLOG_DATABASE_URL: "" };
  // A store as a user has it: an account from bootstrap, seeded executions and some of the member's own, a
  // secret variable and a bucket.
  const bootstrapped = await flowlog(["bootstrap", "--json", "--plan", "pro"]);
  expect(bootstrapped.code, bootstrapped.stderr).toBe(0);
  const { workspace, user } = JSON.parse(bootstrapped.stdout) as {
    workspace: { id: string };
    user: { id: string };
  };
  const seeded = await flowlog(["seed", "--workspace", workspace.id, "--executions", `${seededRuns}`]);
  expect(seeded.code, seeded.stderr).toBe(0);
  const store = openStore({ dataDir });
  try {
    await store.environment.set(workspace.id, "API_TOKEN", "s3cret-value", Date.now());
    await store.rateLimits.take(`api:${user.id}`, defaultPlanLimits.pro.api, Date.now());
    const workflows = await store.workflows.listWorkflows(workspace.id);
    const request = { workflows, count: billedRuns, days: 1, now: Date.now(), billedUserId: user.id };
    const billed: ExecutionRecord[] = [];
    for await (const record of generateExecutions(new Random("billed"), request)) billed.push(record);
    expect(await store.logs.insertExecutions(billed)).toBe(billedRuns);
  } finally {
    await store.close();
  }
}, 300_000);
afterAll(() => server.stop());

describe("flowlog migrate-data (issue 15)", () => {
  it("copies every table of a SQLite store into an empty PostgreSQL database, verified by counts and checksums", async () => {
    const url = await server.createDatabase();

    const copied = await migrateInto(url);

    expect(copied.code, copied.stderr).toBe(0);
    for (const { name } of copiedTables) expect(copied.stdout).toMatch(new RegExp(`^${name} +ok `, "m"));
    const counts = await countsIn(url);
    expect(counts.log_entries).toBe(executions);
    expect(counts.environment_variables).toBe(1);
    expect(counts.rate_limit_buckets).toBe(1);
    expect(counts.usage_periods).toBeGreaterThan(0);
    expect(counts.workflow_states).toBeGreaterThan(0);
    expect(counts.workflow_states).toBeLessThan(executions);
  });

  it("resumes a copy that was killed part-way, writing no row twice", async () => {
    const url = await server.createDatabase();
    const killed = await killedPartWay(url);
    expect(killed).toBe(true);
    const part = await countsIn(url);
    expect(part.log_entries).toBeGreaterThan(0);
    expect(part.log_entries).toBeLessThan(executions);

    // --to names a target without a password (PGPASSWORD or ~/.pgpass would hold it).
    const resumed = await flowlog(["migrate-data", "--to", url, "--batch-rows", "50"]);

    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).not.toContain("DIFFERS");
    expect((await countsIn(url)).log_entries).toBe(executions);
  });

  it("a finished copy run again changes nothing and verifies again; a changed row is reported", async () => {
    const url = await server.createDatabase();
    expect((await migrateInto(url)).code).toBe(0);
    const again = await migrateInto(url);
    expect(again.code, again.stderr).toBe(0);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      "UPDATE log_entries SET level = 'error' WHERE id = (SELECT min(id) FROM log_entries WHERE level = 'info')",
    );
    await client.end();
    const changed = await migrateInto(url);

    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/^log_entries +DIFFERS /m);
    expect(changed.stdout).toMatch(/^users +ok /m);
    expect(changed.stderr).toContain("differs from the source");
  });

  it("refuses a target that holds data of its own, a missing source, a bad URL and no target, naming each", async () => {
    const used = await server.createDatabase();
    const pool = await openPostgres(used);
    await pool.query(
      "INSERT INTO users (id, email, plan, created_at) VALUES ('usr_other', 'o@example.com', 'free', 0)",
    );
    await pool.end();
    const foreign = await migrateInto(used);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain("already holds data (table users)");

    const url = await server.createDatabase();
    const noSource = await migrateInto(url, [], { FLOWLOG_DATA_DIR: path.join(dataDir, "nowhere") });
    expect(noSource.code).toBe(2);
    expect(noSource.stderr).toContain("no SQLite store at");
    expect(noSource.stderr).toContain("FLOWLOG_DATA_DIR");

    const badUrl = await migrateInto("postgres://flowlog:hunter2@127.0.0.1:1/x");
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain("FLOWLOG_DATABASE_URL=postgres://flowlog:***@127.0.0.1:1/x");
    expect(badUrl.stderr).not.toContain("hunter2");

    const noTarget = await flowlog(["migrate-data"]);
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain("set FLOWLOG_DATABASE_URL");
  });

  it("refuses a password on the command line, where ps shows it to every user, and names the variable to use (issue 49)", async () => {
    const url = await server.createDatabase();
    const inUserinfo = new URL(url);
    inUserinfo.password = "hunter2-secret";
    const asParameter = new URL(url);
    asParameter.searchParams.set("password", "hunter2-secret");

    for (const target of [inUserinfo.href, asParameter.href]) {
      const refused = await flowlog(["migrate-data", "--to", target]);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain("holds a password");
      expect(refused.stderr).toContain("set FLOWLOG_DATABASE_URL to the URL instead");
      expect(refused.stderr).not.toContain("hunter2-secret");
    }
    // Refused before anything was written: the target has no table.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const tables = await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    await client.end();
    expect(tables.rows).toEqual([]);
  });
});

/** Starts a copy in small batches and SIGKILLs it once it reports log entries copied. */
function killedPartWay(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(process.execPath, [cli, "migrate-data", "--batch-rows", "50"], {
      env: { ...env, FLOWLOG_DATABASE_URL: url },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let killed = false;
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      if (!killed && /log_entries: [1-9]\d*\/\d+/.test(text)) {
        killed = child.kill("SIGKILL");
      }
    });
    child.on("exit", () => resolve(killed));
  });
}
