import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";

/**
 * Issue 13: what a request makes dies young. Under load, V8's collections of the young generation
 * should find little alive besides the requests in flight, and promote next to nothing to the old one.
 *
 * An object with a getter of its own (an object literal's `get`) gets an accessor pair in the old
 * generation, and that keeps the getter and all it closes over alive through young collections: with
 * such literals in every call's context, each young collection under a one-entry load promoted about
 * 800 KB and took about 3 ms; with classes, a few KB and under 1 ms (unary-context.ts). The traces of
 * `--trace-gc-nvp` give what each collection promoted.
 */

const repoRoot = path.resolve(import.meta.dirname, "..");
const unlimited = { requestsPerMinute: 1_000_000_000, maxBurst: 1_000_000_000 };
const planLimits = JSON.stringify({
  enterprise: { api: unlimited, syncExecutions: unlimited, asyncExecutions: unlimited },
});

/** Well above the few KB a collection promotes now, well below the 800 KB of the literals' getters. */
const maxMedianPromotedBytes = 100 * 1024;
/** Enough young collections for a median, and a cap on the time spent loading. */
const minCollections = 15;
const maxLoadMs = 20_000;

let serve: ServeProcess;
let account: { key: string; workspace: { id: string } };
let entryId: string;

beforeAll(async () => {
  serve = await startServeProcess({ FLOWLOG_PLAN_LIMITS: planLimits }, { nodeArgs: ["--trace-gc-nvp"] });
  const flowlog = async (args: string[]) =>
    (
      await promisify(execFile)(process.execPath, ["bin/flowlog.js", ...args], {
        cwd: repoRoot,
        env: { ...process.env, FLOWLOG_DATA_DIR: serve.dataDir, FLOWLOG_PLAN_LIMITS: planLimits },
      })
    ).stdout;
  account = JSON.parse(await flowlog(["bootstrap", "--plan", "enterprise", "--json"]));
  await flowlog(["seed", "--workspace", account.workspace.id, "--executions", "20", "--seed", "gc"]);
  const page = (await (
    await fetch(`${serve.url}/api/v1/logs?workspaceId=${account.workspace.id}&limit=1`, {
      headers: { "x-api-key": account.key },
    })
  ).json()) as { data: { id: string }[] };
  entryId = page.data[0]?.id as string;
  expect(entryId).toBeTruthy();
});
afterAll(() => serve?.stop());

/** Bytes promoted by each young collection (a scavenge, `gc=s`) in the traces after `from`. */
function promotedByScavenges(from: number): number[] {
  return serve
    .stdout()
    .slice(from)
    .split("\n")
    .filter((line) => / gc=s /.test(line))
    .map((line) => Number(/ promoted=(\d+) /.exec(line)?.[1]));
}

/** Ten clients in closed loops, until enough young collections were traced; the bytes each promoted. */
async function promotedUnderLoad(request: () => Promise<Response>): Promise<number[]> {
  const from = serve.stdout().length;
  const started = Date.now();
  let done = false;
  const watch = setInterval(() => {
    done = promotedByScavenges(from).length >= minCollections || Date.now() - started > maxLoadMs;
  }, 100);
  let failures = 0;
  try {
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (!done) {
          const response = await request();
          await response.arrayBuffer();
          if (response.status !== 200) failures++;
        }
      }),
    );
  } finally {
    clearInterval(watch);
  }
  expect(failures).toBe(0);
  const promoted = promotedByScavenges(from);
  expect(promoted.length).toBeGreaterThanOrEqual(minCollections);
  return promoted;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

describe("a request's objects die young (issue 13)", () => {
  it("over REST: young collections under a one-entry load promote next to nothing", async () => {
    const promoted = await promotedUnderLoad(() =>
      fetch(`${serve.url}/api/v1/logs/${entryId}`, { headers: { "x-api-key": account.key } }),
    );
    expect(median(promoted)).toBeLessThan(maxMedianPromotedBytes);
  });

  it("over Connect, through the one port's request adapter: the same", async () => {
    const promoted = await promotedUnderLoad(() =>
      fetch(`${serve.url}/flowlog.logs.v1.LogsService/GetLog`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "connect-protocol-version": "1",
          "x-api-key": account.key,
        },
        body: JSON.stringify({ id: entryId }),
      }),
    );
    expect(median(promoted)).toBeLessThan(maxMedianPromotedBytes);
  });
});
