import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { promisify, stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../src/store/store.js";
import { freePort } from "../src/util/free-port.js";
import { createWorkflow, execution, type TestAccount } from "./support/flowlog.js";
import { moduleCacheProbe } from "./support/module-cache.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";
import { untilTrue } from "./support/until.js";

/**
 * Issue 55, item 3: `flowlog logs list|get|tail`, the CLI as a client of the public API, run as a child
 * process against a real `flowlog serve`; what it prints is held to what the API itself answers.
 */

const repoRoot = path.resolve(import.meta.dirname, "..");
// Enough that each case below finds entries whatever the draw: at 30, no error entry at all came up 1 run in 12.
const seeded = 100;

let serve: ServeProcess;
let account: TestAccount;

interface Printed {
  code: number;
  stdout: string;
  stderr: string;
}

/** `flowlog <args>` to its end, with the server's URL and the key in the environment as an operator sets them. */
async function flowlog(args: string[], env: Record<string, string | undefined> = {}): Promise<Printed> {
  const options = { cwd: repoRoot, env: { ...cliEnv(), ...env } };
  return promisify(execFile)(process.execPath, ["bin/flowlog.js", ...args], options).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: Printed) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

function cliEnv(): Record<string, string> {
  const { FLOWLOG_WORKSPACE: _, ...inherited } = process.env as Record<string, string>;
  return {
    ...inherited,
    FLOWLOG_URL: serve.url,
    // None until bootstrap has made it.
    ...(account && { FLOWLOG_API_KEY: account.key }),
    FLOWLOG_DATA_DIR: serve.dataDir,
    FLOWLOG_LOG_LEVEL: "warn",
  };
}

/** The API's own answer to GET `pathAndQuery`, with the key. */
async function api<T>(pathAndQuery: string): Promise<T> {
  const response = await fetch(`${serve.url}${pathAndQuery}`, { headers: { "x-api-key": account.key } });
  expect(response.status, pathAndQuery).toBe(200);
  return (await response.json()) as T;
}

interface Entry {
  id: string;
  workflow?: { name: string };
}

const ndjson = (text: string) =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Entry);

beforeAll(async () => {
  serve = await startServeProcess();
  const bootstrapped = await flowlog(["bootstrap", "--json", "--plan", "enterprise"]);
  expect(bootstrapped.code, bootstrapped.stderr).toBe(0);
  const made = JSON.parse(bootstrapped.stdout) as {
    user: { id: string };
    workspace: { id: string };
    apiKey: { id: string };
    key: string;
  };
  account = { userId: made.user.id, workspaceId: made.workspace.id, key: made.key, keyId: made.apiKey.id };
  const seed = await flowlog(["seed", "--workspace", account.workspaceId, "--executions", `${seeded}`]);
  expect(seed.code, seed.stderr).toBe(0);
});
afterAll(() => serve?.stop());

describe("flowlog logs list", () => {
  it("--json prints the API's own page, entry for entry in its order, with the filters given", async () => {
    // The seed is drawn anew per workspace: the level searched with is one the search finds.
    const checks = await api<{ data: { level: string }[] }>(
      `/api/v1/logs?workspaceId=${account.workspaceId}&q=check*&limit=1`,
    );
    const [found] = checks.data;
    if (!found) throw new Error("q=check* found no seeded entry");
    const { level } = found;
    const cases: [string[], string][] = [
      [["--level", "error"], "level=error"],
      [["--trigger", "api,schedule", "--order", "asc"], "triggers=api,schedule&order=asc"],
      [
        ["--trigger", "webhook", "--trigger", "chat", "--min-duration-ms", "1000"],
        "triggers=webhook,chat&minDurationMs=1000",
      ],
      [["--limit", "5", "--details", "full"], "limit=5&details=full"],
      // The seeder's "Uptime check" workflow: a search (D45) narrows to its entries.
      [["-q", "uptime"], "q=uptime"],
      [["--search", "check*", "--level", level], `q=check*&level=${level}`],
    ];
    for (const [options, query] of cases) {
      const printed = await flowlog([
        "logs",
        "list",
        "--json",
        "--workspace",
        account.workspaceId,
        ...options,
      ]);
      expect(printed.code, printed.stderr).toBe(0);
      const page = await api<{ data: Entry[] }>(`/api/v1/logs?workspaceId=${account.workspaceId}&${query}`);
      expect(page.data.length, query).toBeGreaterThan(0);
      expect(ndjson(printed.stdout), query).toEqual(page.data);
    }
    const all = await api<{ data: Entry[] }>(`/api/v1/logs?workspaceId=${account.workspaceId}&limit=1000`);
    const searched = await api<{ data: Entry[] }>(
      `/api/v1/logs?workspaceId=${account.workspaceId}&limit=1000&q=uptime`,
    );
    expect(searched.data.length).toBeLessThan(all.data.length);
  });

  it("--all follows nextCursor through every page, each entry once", async () => {
    const printed = await flowlog([
      "logs",
      "list",
      "--json",
      "--all",
      "--limit",
      "7",
      "--workspace",
      account.workspaceId,
    ]);
    expect(printed.code, printed.stderr).toBe(0);
    const everything = await api<{ data: Entry[] }>(
      `/api/v1/logs?workspaceId=${account.workspaceId}&limit=1000`,
    );
    expect(everything.data).toHaveLength(seeded);
    expect(ndjson(printed.stdout).map((e) => e.id)).toEqual(everything.data.map((e) => e.id));
  });

  it("starts without Temporal's SDK: a client of the API loads none of it", async () => {
    // Read from the module cache at exit (Temporal's packages are CommonJS, so all of them are in it).
    const probe = moduleCacheProbe();
    const printed = await flowlog(
      ["logs", "list", "--json", "--limit", "1", "--workspace", account.workspaceId],
      probe.env,
    );
    expect(printed.code, printed.stderr).toBe(0);
    const loaded = probe.loaded();
    // The cache was written: commander, the CLI's own CommonJS dependency, is in it.
    expect(loaded.filter((module) => module.includes("node_modules/commander/")).length).toBeGreaterThan(0);
    expect(loaded.filter((module) => module.includes("node_modules/@temporalio/"))).toEqual([]);
  });

  it("without --all prints one page and says on stderr how to get the next", async () => {
    const printed = await flowlog([
      "logs",
      "list",
      "--json",
      "--limit",
      "7",
      "--workspace",
      account.workspaceId,
    ]);
    expect(ndjson(printed.stdout)).toHaveLength(7);
    const { nextCursor } = await api<{ nextCursor: string }>(
      `/api/v1/logs?workspaceId=${account.workspaceId}&limit=7`,
    );
    expect(printed.stderr).toContain(`--cursor ${nextCursor}`);
  });

  it("stops quietly with exit 0 when its reader has seen enough (`| head`)", async () => {
    const args = [
      "logs",
      "list",
      "--json",
      "--all",
      "--limit",
      "2",
      "--trace-spans",
      "--workspace",
      account.workspaceId,
    ];
    const child = spawn(process.execPath, ["bin/flowlog.js", ...args], { cwd: repoRoot, env: cliEnv() });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.stdout.once("data", () => child.stdout.destroy());
    const [code] = await once(child, "exit");
    expect(stderr).not.toContain("EPIPE");
    expect(code).toBe(0);
  });

  it("prints a table for people: a header, then each entry's id and its workflow's name, uncoloured in a pipe", async () => {
    const printed = await flowlog(["logs", "list", "--limit", "10", "--workspace", account.workspaceId]);
    expect(printed.code, printed.stderr).toBe(0);
    const page = await api<{ data: (Entry & { executionId: string })[] }>(
      `/api/v1/logs?workspaceId=${account.workspaceId}&limit=10&details=full`,
    );
    const [header, ...rows] = printed.stdout.trimEnd().split("\n");
    expect(header).toMatch(
      /^STARTED \(UTC\)\s+LEVEL\s+ID\s+WORKFLOW\s+DURATION\s+COST\s+TRIGGER\s+EXECUTION$/,
    );
    expect(rows).toHaveLength(page.data.length);
    page.data.forEach((entry, i) => {
      expect(rows[i]).toContain(entry.id);
      expect(rows[i]).toContain(entry.executionId);
      expect(rows[i]).toContain(entry.workflow?.name);
    });
    expect(printed.stdout).not.toContain("\x1b[");
  });
  it("on a terminal, fits the table to its width and colours the errors", async () => {
    // A real pseudo-terminal 80 columns wide (util-linux `script`), as an operator's window.
    const command = `stty cols 80; ${process.execPath} bin/flowlog.js logs list --limit ${seeded} --workspace ${account.workspaceId}`;
    // Node decides colours from the environment too (NO_COLOR, FORCE_COLOR, and CI, set on CI machines,
    // which counts as a two-colour terminal): the operator's window has none of them.
    const {
      CI: _ci,
      NO_COLOR: _no,
      FORCE_COLOR: _force,
      NODE_DISABLE_COLORS: _disable,
      ...terminalEnv
    } = cliEnv();
    const printed = await promisify(execFile)("script", ["-qec", command, "/dev/null"], {
      cwd: repoRoot,
      env: { ...terminalEnv, TERM: "xterm-256color" },
    });
    const lines = printed.stdout
      .split(/\r?\n/)
      .filter((line) => line.startsWith("STARTED") || /\d{4}-/.test(line));
    const page = await api<{ data: (Entry & { level: string })[] }>(
      `/api/v1/logs?workspaceId=${account.workspaceId}&limit=${seeded}`,
    );
    expect(new Set(page.data.map((e) => e.level))).toEqual(new Set(["info", "error"]));
    expect(lines).toHaveLength(page.data.length + 1);
    for (const line of lines) expect(stripVTControlCharacters(line).length).toBeLessThanOrEqual(80);
    page.data.forEach((entry, i) => {
      const row = lines[i + 1] as string;
      expect(stripVTControlCharacters(row)).toContain(entry.id);
      expect(row.startsWith("\x1b[31m")).toBe(entry.level === "error");
    });
  });
});

describe("flowlog logs get", () => {
  it("--json prints the entry's detail form as GetLog answers it; without, its spans and output for people", async () => {
    const [first] = (await api<{ data: Entry[] }>(`/api/v1/logs?workspaceId=${account.workspaceId}&limit=1`))
      .data;
    const id = first?.id as string;
    const detail = await api<{
      data: Entry & { executionData: { traceSpans: { name: string }[] } };
    }>(`/api/v1/logs/${id}`);

    const json = await flowlog(["logs", "get", id, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    // The same entry; `limits` tells the caller's buckets at the moment of each call, so only its presence.
    expect(ndjson(json.stdout)).toEqual([{ ...detail.data, limits: expect.any(Object) }]);

    const text = await flowlog(["logs", "get", id]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(id);
    expect(text.stdout).toContain(detail.data.workflow?.name);
    for (const span of detail.data.executionData.traceSpans) expect(text.stdout).toContain(span.name);
  });

  it("an unknown id prints the API's not_found problem and exits 1", async () => {
    const printed = await flowlog(["logs", "get", "log_doesnotexist"]);
    expect(printed.code).toBe(1);
    expect(printed.stderr).toContain("404 not_found");
  });
});

/** `flowlog logs tail` running in the background, its output gathered as it comes. */
function startTail(args: string[]): {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
} {
  const child = spawn(process.execPath, ["bin/flowlog.js", "logs", "tail", ...args], {
    cwd: repoRoot,
    env: cliEnv(),
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  return { child, stdout: () => stdout, stderr: () => stderr };
}

describe("flowlog logs tail (D44)", () => {
  let writer: Store;
  beforeAll(() => {
    // Another process's writes, as the worker makes them, in the data dir the server reads.
    writer = openStore({ dataDir: serve.dataDir });
  });
  afterAll(() => writer?.close());

  it("prints the entries written after it started, and resumes after the server restarts without losing or repeating one; Ctrl-C exits 0", async () => {
    const workflowId = await createWorkflow(writer, account.workspaceId, "Tailed report");
    const write = async () => {
      const record = execution(account, workflowId);
      await writer.logs.insertExecution(record);
      return record.entry.id;
    };
    const before = await write();
    const tail = startTail(["--json", "--workspace", account.workspaceId]);
    try {
      await untilTrue(() => tail.stderr().includes("following"));
      const first = await write();
      await untilTrue(() => tail.stdout().includes(first));

      // The same data dir and port: the follower comes back to the address it knows.
      const port = new URL(serve.url).port;
      await serve.stop();
      const whileDown = [await write(), await write()];
      serve = await startServeProcess({ FLOWLOG_DATA_DIR: serve.dataDir, PORT: port });
      await untilTrue(() => tail.stderr().includes("resumed"), 30_000);
      const after = await write();
      await untilTrue(() => tail.stdout().includes(after));

      expect(ndjson(tail.stdout()).map((e) => e.id)).toEqual([first, ...whileDown, after]);
      expect(tail.stdout()).not.toContain(before);
      tail.child.kill("SIGINT");
      const [code] = await once(tail.child, "exit");
      expect(code).toBe(0);
    } finally {
      tail.child.kill();
    }
  }, 90_000);

  it("prints a table row per entry for people", async () => {
    const workflowId = await createWorkflow(writer, account.workspaceId, "Table report");
    const tail = startTail(["--workspace", account.workspaceId, "--level", "error"]);
    try {
      await untilTrue(() => tail.stderr().includes("following"));
      const info = execution(account, workflowId, { level: "info" });
      const error = execution(account, workflowId, { level: "error" });
      await writer.logs.insertExecution(info);
      await writer.logs.insertExecution(error);
      await untilTrue(() => tail.stdout().includes(error.entry.id));
      expect(tail.stdout()).toContain("Table report");
      expect(tail.stdout()).not.toContain(info.entry.id);
    } finally {
      tail.child.kill("SIGINT");
    }
  });
});

describe("flowlog logs: refusals", () => {
  it("a bad option value exits 2 naming the option, with no stack trace", async () => {
    const workspace = ["--workspace", account.workspaceId];
    const cases: [string[], string][] = [
      [["list", ...workspace, "--limit", "0"], "--limit"],
      [["list", ...workspace, "--since", "yesterday"], "--since"],
      [["list", ...workspace, "--min-cost", "-1"], "--min-cost"],
      [["list", ...workspace, "--trigger", "api,cron"], "--trigger"],
      [["tail", ...workspace, "--level", "loud"], "--level"],
      [["get", "log_x", "--url", "ftp://example.test"], "--url"],
    ];
    for (const [args, option] of cases) {
      const printed = await flowlog(["logs", ...args]);
      expect(printed.code, args.join(" ")).toBe(2);
      expect(printed.stderr).toContain(option);
      expect(printed.stderr).not.toMatch(/^\s+at /m);
    }
    const keyless = await flowlog(["logs", "list", "--workspace", account.workspaceId], {
      FLOWLOG_API_KEY: undefined,
    });
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain("--api-key");
  });

  it("a server that cannot be reached exits 1 saying where it looked", async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    for (const args of [
      ["list", "--workspace", account.workspaceId],
      ["tail", "--workspace", account.workspaceId],
    ]) {
      const printed = await flowlog(["logs", ...args], { FLOWLOG_URL: nowhere });
      expect(printed.code, args[0]).toBe(1);
      expect(printed.stderr).toContain(`cannot reach ${nowhere}: ECONNREFUSED`);
    }
  });

  it("a bad key exits 1 with the API's unauthenticated problem, and the key appears nowhere in the output", async () => {
    const badKey = `${account.key.slice(0, -6)}XXXXXX`;
    const workspace = ["--workspace", account.workspaceId];
    for (const args of [
      ["list", ...workspace],
      ["get", "log_x"],
      ["tail", ...workspace],
    ]) {
      // From the environment, as --help advises, and as an option (which wins over the environment).
      for (const [env, option] of [
        [{ FLOWLOG_API_KEY: badKey }, []],
        [{}, ["--api-key", badKey]],
      ] as const) {
        const printed = await flowlog(["logs", ...args, ...option], env);
        expect(printed.code, args.join(" ")).toBe(1);
        expect(printed.stderr).toContain("401 unauthenticated");
        expect(printed.stdout + printed.stderr).not.toContain(badKey);
      }
    }
  });
});
