import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultQuotas } from "../src/limits/quotas.js";
import { buildCompletionEvent } from "../src/notifications/event.js";
import { sendWebhookAttempt, type WebhookAttempt } from "../src/notifications/http-channel.js";
import { newStandardSecret } from "../src/notifications/standard-webhooks.js";
import { openStore, type Store } from "../src/store/store.js";
import { freePort } from "../src/util/free-port.js";
import { newId } from "../src/util/ids.js";
import { createWorkflow, execution, type TestAccount } from "./support/flowlog.js";
import { ensurePythonClient } from "./support/python.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";
import { untilTrue } from "./support/until.js";

/**
 * Issue 55, item 1 (D49): the client packages of clients/, used as their READMEs say. Each README's two
 * examples are files it shows verbatim, and these tests run those very files: the logs example against a
 * real `flowlog serve` (list, get one, follow the tail while another process writes entries), the webhook
 * receiver against deliveries sent by flowlog's own delivery code in both signature schemes (D39).
 */

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, "..");
const clientsDir = path.join(repoRoot, "clients");

interface Language {
  name: string;
  dir: string;
  /** The README's code fence language. */
  fence: string;
  /** The example files under `dir`, as the README shows them. */
  examples: { logs: string; webhooks: string };
  /** Readies the package as a user would (build, install) and answers how to run an example. */
  prepare(): Promise<(example: string) => [string, string[]]>;
}

const buildDir = mkdtempSync(path.join(tmpdir(), "flowlog-clients-"));

const languages: Language[] = [
  {
    name: "TypeScript",
    dir: "typescript",
    fence: "ts",
    examples: { logs: "examples/logs.ts", webhooks: "examples/webhooks.ts" },
    async prepare() {
      // As the README says: the package built (its prepare script, tsc, which `npm install` runs there) and
      // packed, then installed in a project of the user's, made by `npm init -y`, whose package.json says
      // "commonjs": the logs example's top-level awaits need it run as a module (logs.mts, as the README
      // says to save it). Its dependencies come from the npm registry, as a user's would.
      const packageDir = path.join(clientsDir, "typescript");
      await run(path.join(repoRoot, "node_modules", ".bin", "tsc"), ["-p", packageDir]);
      const project = path.join(buildDir, "typescript-project");
      mkdirSync(project);
      const npm = (args: string[], cwd: string) => run("npm", [...args, "--no-audit", "--no-fund"], { cwd });
      const { stdout } = await npm(
        ["pack", "--ignore-scripts", "--pack-destination", buildDir, "--json"],
        packageDir,
      );
      const [packed] = JSON.parse(stdout) as { filename: string }[];
      if (!packed) throw new Error(`npm pack wrote no tarball: ${stdout}`);
      await npm(["init", "-y"], project);
      await npm(["install", path.join(buildDir, packed.filename), "standardwebhooks", "tsx"], project);
      const saved = { "examples/logs.ts": "logs.mts", "examples/webhooks.ts": "webhooks.ts" };
      for (const [example, file] of Object.entries(saved)) {
        copyFileSync(path.join(packageDir, example), path.join(project, file));
      }
      const tsx = path.join(project, "node_modules", "tsx", "dist", "cli.mjs");
      return (example) => [process.execPath, [tsx, path.join(project, saved[example as keyof typeof saved])]];
    },
  },
  {
    name: "Python",
    dir: "python",
    fence: "python",
    examples: { logs: "examples/logs.py", webhooks: "examples/webhooks.py" },
    async prepare() {
      const python = ensurePythonClient();
      return (example) => [python, [path.join(clientsDir, "python", example)]];
    },
  },
  {
    name: "Go",
    dir: "go",
    fence: "go",
    examples: { logs: "examples/logs/main.go", webhooks: "examples/webhooks/main.go" },
    async prepare() {
      const binaries = path.join(buildDir, "go");
      await run("go", ["build", "-o", `${binaries}/`, "./examples/..."], {
        cwd: path.join(clientsDir, "go"),
      });
      return (example) => [path.join(binaries, path.basename(path.dirname(example))), []];
    },
  },
];

let serve: ServeProcess;
let account: TestAccount;
let writer: Store;
let workflowId: string;
const runners = new Map<string, (example: string) => [string, string[]]>();

async function flowlog(args: string[]): Promise<string> {
  const env = {
    ...process.env,
    FLOWLOG_URL: serve.url,
    FLOWLOG_DATA_DIR: serve.dataDir,
    FLOWLOG_LOG_LEVEL: "warn",
  };
  const { stdout } = await run(process.execPath, ["bin/flowlog.js", ...args], { cwd: repoRoot, env });
  return stdout;
}

beforeAll(async () => {
  serve = await startServeProcess();
  const made = JSON.parse(await flowlog(["bootstrap", "--json", "--plan", "enterprise"])) as {
    user: { id: string };
    workspace: { id: string };
    apiKey: { id: string };
    key: string;
  };
  account = { userId: made.user.id, workspaceId: made.workspace.id, key: made.key, keyId: made.apiKey.id };
  await flowlog(["seed", "--workspace", account.workspaceId, "--executions", "12"]);
  // Another process's writes, as the worker makes them, in the data dir the server reads.
  writer = openStore({ dataDir: serve.dataDir });
  workflowId = await createWorkflow(writer, account.workspaceId, "Followed report");
  for (const language of languages) runners.set(language.name, await language.prepare());
}, 600_000);
afterAll(async () => {
  await writer?.close();
  await serve?.stop();
  rmSync(buildDir, { recursive: true, force: true });
});

/** An example running in the background, its output gathered as it comes. */
interface Program {
  child: ChildProcessWithoutNullStreams;
  lines(): string[];
  stderr(): string;
}

function start(language: Language, example: string, env: Record<string, string>): Program {
  const runner = runners.get(language.name);
  if (!runner) throw new Error(`${language.name} was not prepared`);
  const [command, args] = runner(example);
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, PYTHONUNBUFFERED: "1", ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  return { child, lines: () => stdout.split("\n").filter((line) => line !== ""), stderr: () => stderr };
}

async function api<T>(pathAndQuery: string): Promise<T> {
  const response = await fetch(`${serve.url}${pathAndQuery}`, { headers: { "x-api-key": account.key } });
  expect(response.status, pathAndQuery).toBe(200);
  return (await response.json()) as T;
}

interface Entry {
  id: string;
  level: string;
  totalDurationMs: number;
  workflow?: { name: string };
  cost?: { total?: number };
}

describe.each(languages)("the $name client", (language) => {
  it("its README shows both examples verbatim, and the package's manifest is at the API's version", () => {
    const readme = readFileSync(path.join(clientsDir, language.dir, "README.md"), "utf8");
    for (const example of Object.values(language.examples)) {
      const code = readFileSync(path.join(clientsDir, language.dir, example), "utf8");
      expect(readme, example).toContain(`\`\`\`${language.fence}\n${code}\`\`\`\n`);
    }
    const { version } = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
      version: string;
    };
    if (language.dir === "typescript") {
      const manifest = readFileSync(path.join(clientsDir, "typescript", "package.json"), "utf8");
      expect((JSON.parse(manifest) as { version: string }).version).toBe(version);
    } else if (language.dir === "python") {
      const manifest = readFileSync(path.join(clientsDir, "python", "pyproject.toml"), "utf8");
      expect(manifest).toContain(`\nversion = "${version}"\n`);
    } else {
      // Go has no version in go.mod: a module in a subdirectory is versioned by tags clients/go/v<version>.
      expect(readme).toContain(`clients/go/v${version}`);
    }
  });

  it("the logs example lists and gets what the API answers, then prints the entries written while it follows the tail", async () => {
    const program = start(language, language.examples.logs, {
      FLOWLOG_URL: serve.url,
      FLOWLOG_API_KEY: account.key,
      FLOWLOG_WORKSPACE: account.workspaceId,
    });
    const printed = (kind: string) =>
      program
        .lines()
        .filter((line) => line.startsWith(`${kind} `))
        .map((line) => line.split(" ").slice(1));
    try {
      await untilTrue(() => printed("got").length > 0 || program.child.exitCode !== null, 60_000);
      expect(program.child.exitCode, program.stderr()).toBeNull();
      const page = await api<{ data: Entry[] }>(`/api/v1/logs?workspaceId=${account.workspaceId}&limit=5`);
      expect(page.data).toHaveLength(5);
      expect(printed("listed")).toEqual(
        page.data.map((entry) => [entry.id, entry.level, String(entry.totalDurationMs)]),
      );
      const first = page.data[0] as Entry;
      const { data: detail } = await api<{ data: Entry }>(`/api/v1/logs/${first.id}`);
      const [gotId, ...rest] = printed("got")[0] ?? [];
      expect(gotId).toBe(detail.id);
      // The workflow's name may hold spaces; the cost is last, in each language's own number format.
      expect(rest.slice(0, -1).join(" ")).toBe(detail.workflow?.name);
      expect(Number(rest.at(-1))).toBeCloseTo(detail.cost?.total ?? Number.NaN, 12);

      // The tail follows from when it is open: write until the first written entry shows, then one more.
      const written: string[] = [];
      const write = async (level: "info" | "error" = "info") => {
        const record = execution(account, workflowId, { level });
        await writer.logs.insertExecution(record);
        written.push(record.entry.id);
        return record.entry.id;
      };
      await untilTrue(async () => {
        await write();
        await sleep(250);
        return printed("tailed").length > 0;
      }, 60_000);
      const last = await write("error");
      await untilTrue(() => printed("tailed").some(([id]) => id === last), 30_000);
      const tailed = printed("tailed");
      expect(tailed.at(-1)).toEqual([last, "error"]);
      // Each one once, in the order written, none from before the tail opened.
      const tailedIds = tailed.map(([id]) => id);
      expect(tailedIds).toEqual(written.filter((id) => tailedIds.includes(id)));
      expect(tailedIds).not.toContain(first.id);
    } finally {
      program.child.kill();
    }
  }, 120_000);

  it("the webhook receiver accepts flowlog's deliveries in both signature schemes and refuses forged ones", async () => {
    const port = await freePort();
    const serviceSecret = "whsec_receiver_of_the_service_scheme";
    const standardSecret = newStandardSecret();
    const program = start(language, language.examples.webhooks, {
      PORT: String(port),
      FLOWLOG_WEBHOOK_SECRET: serviceSecret,
      STANDARD_WEBHOOK_SECRET: standardSecret,
    });
    try {
      await untilTrue(async () => (await accepts(port)) || program.child.exitCode !== null, 60_000);
      expect(program.child.exitCode, program.stderr()).toBeNull();
      const record = execution(account, workflowId);
      // Non-ASCII on purpose: the signature covers the UTF-8 bytes the receiver reads.
      const entry = { ...record.entry, finalOutput: { greeting: "héllo 👋" } };
      const event = buildCompletionEvent({
        eventId: newId("evt"),
        timestampMs: Date.now(),
        entry,
        include: { finalOutput: true, traceSpans: false, rateLimits: false, usage: false },
      });
      /** One attempt as flowlog's worker sends it, answered with the status the receiver chose. */
      const deliver = async (attempt: Partial<WebhookAttempt>) => {
        const deliveryId = newId("dlv");
        const result = await sendWebhookAttempt({
          url: `http://127.0.0.1:${port}/hooks/flowlog`,
          event,
          deliveryId,
          allowPrivateNetworks: true,
          replyLimitBytes: defaultQuotas.replyBytes.delivery,
          ...attempt,
        });
        return { deliveryId, status: result.httpStatus };
      };
      const cases: [Partial<WebhookAttempt>, string][] = [
        [{ secret: serviceSecret }, "verified"],
        // D33: during a rotation the receiver still holding the old secret accepts the two-signature header.
        [{ secret: "the new secret", previousSecret: serviceSecret }, "verified"],
        [{ signatureScheme: "standard", secret: standardSecret }, "verified"],
        [
          { signatureScheme: "standard", secret: newStandardSecret(), previousSecret: standardSecret },
          "verified",
        ],
        [{ secret: "someone else's secret" }, "rejected"],
        [{ signatureScheme: "standard", secret: newStandardSecret() }, "rejected"],
        [{}, "rejected"],
        // Signed a second too early for the five minutes a verifier allows: a replayed delivery.
        [{ secret: serviceSecret, now: () => Date.now() - 301_000 }, "rejected"],
        [
          { signatureScheme: "standard", secret: standardSecret, now: () => Date.now() - 301_000 },
          "rejected",
        ],
      ];
      const bodyBytes = String(Buffer.byteLength(JSON.stringify(event)));
      for (const [attempt, verdict] of cases) {
        const { deliveryId, status } = await deliver(attempt);
        const line = `${verdict} ${deliveryId} ${bodyBytes}`;
        expect(status, JSON.stringify(attempt)).toBe(verdict === "verified" ? 204 : 401);
        await untilTrue(() => program.lines().includes(line), 10_000);
      }
      expect(program.lines()).toHaveLength(cases.length);
    } finally {
      program.child.kill();
    }
  }, 120_000);
});

/** Whether something accepts connections on the port now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.on("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}
