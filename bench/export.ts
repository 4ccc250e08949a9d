import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { seedWorkspace } from "../src/seed/seed.js";
import { openStore } from "../src/store/store.js";
import {
  bootstrapAccount,
  type RunningProcess,
  repoRoot,
  startFlowlog,
  startProcess,
  startTogether,
  unlimitedPlanLimits,
} from "./support/processes.js";
import { type Bench, type BenchOptions, perSecond, ratio } from "./support/report.js";
import { largeSeedBatch } from "./support/store.js";

const plans = {
  quick: { entries: 5_000, rounds: 1 },
  full: { entries: 1_000_000, rounds: 3 },
};

/** Every part of the detail form: the lines D42's archive writes, which the bare loop splices too. */
const everything = "details=full&includeTraceSpans=true&includeFinalOutput=true";

/**
 * D45's export (issue 53): a workspace's entries downloaded from `flowlog serve` (a process of its own, on
 * SQLite) as `GET /api/v1/logs:export` NDJSON with every part of the detail form, against a bare node:http
 * server that reads the same rows with the same driver and writes the same lines
 * (support/bare-export-server.ts), both read by the same client to the end; and the serve process's RSS
 * growth during the export. Goals (full mode, 1M entries): ≥ 0.7x the bare loop's rate, RSS growth < 64 MB.
 */
export const exportBench: Bench = {
  name: "export",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    return [
      {
        title: "export: a workspace's entries as REST NDJSON (the whole detail form), entries per second",
        columns: [
          "entries",
          "export /s",
          "bare /s",
          "export/bare",
          "NDJSON MB",
          "RSS growth MB",
          "bare RSS growth MB",
        ],
        rows: [await compareAt(plan.entries, plan.rounds)],
        note:
          "bare: one SQL statement in keyset pages of 200 on its own connection, each row's line spliced from " +
          "its stored JSON texts, written to a chunked node:http answer at the socket's pace; the bench checks " +
          `both sent the same bytes (SHA-256). Each side once untimed, then ${plan.rounds} in turns, the ` +
          "medians compared. RSS growth: the serve process's peak RSS during an export less its RSS before it, " +
          "sampled every 10 ms, the most of the timed rounds; bare RSS growth: the same of the bare server, a " +
          "floor (what the rows, their strings and the socket's buffers take in any Node process).",
      },
    ];
  },
};

async function compareAt(entries: number, rounds: number): Promise<(string | number)[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-export-"));
  const env = { FLOWLOG_DATA_DIR: dataDir, FLOWLOG_PLAN_LIMITS: unlimitedPlanLimits };
  const running: RunningProcess[] = [];
  try {
    const { workspaceId, key } = await bootstrapAccount(env);
    const store = openStore({ dataDir });
    try {
      await seedWorkspace(store, {
        workspaceId,
        executions: entries,
        seed: "bench",
        batchSize: largeSeedBatch,
      });
    } finally {
      await store.close();
    }
    const bareScript = path.join(repoRoot, "bench/support/bare-export-server.ts");
    const [serve, bare] = await startTogether([
      startFlowlog(["serve"], {
        env: { ...env, PORT: "0" },
        ready: /flowlog API at http:\/\/localhost:(\d+)/,
      }),
      startProcess(process.execPath, ["--import", "tsx", bareScript, dataDir, workspaceId], {
        ready: /server on port (\d+)/,
      }),
    ] as const);
    running.push(serve, bare);
    const exportUrl = `http://127.0.0.1:${serve.ready[1]}/api/v1/logs:export?workspaceId=${workspaceId}&${everything}`;
    const bareUrl = `http://127.0.0.1:${bare.ready[1]}/`;
    const exportSeconds: number[] = [];
    const bareSeconds: number[] = [];
    let rssGrowth = 0;
    let bareRssGrowth = 0;
    let bytes = 0;
    for (let round = 0; round <= rounds; round++) {
      const baseline = await download(bareUrl, {}, bare.pid);
      const exported = await download(exportUrl, { "x-api-key": key }, serve.pid);
      if (exported.sha256 !== baseline.sha256 || exported.lines !== entries) {
        throw new Error(
          `the export sent ${exported.lines} lines (SHA-256 ${exported.sha256}), the bare loop ` +
            `${baseline.lines} (${baseline.sha256}), of ${entries} entries`,
        );
      }
      bytes = exported.bytes;
      // The untimed round also loads and compiles what the first export runs.
      if (round === 0) continue;
      rssGrowth = Math.max(rssGrowth, exported.rssGrowthBytes);
      bareRssGrowth = Math.max(bareRssGrowth, baseline.rssGrowthBytes);
      exportSeconds.push(exported.seconds);
      bareSeconds.push(baseline.seconds);
    }
    const [exportTime, bareTime] = [median(exportSeconds), median(bareSeconds)];
    return [
      perSecond(entries),
      perSecond(entries / exportTime),
      perSecond(entries / bareTime),
      ratio(bareTime / exportTime),
      (bytes / 1e6).toFixed(1),
      (rssGrowth / 1e6).toFixed(1),
      (bareRssGrowth / 1e6).toFixed(1),
    ];
  } finally {
    await Promise.all(running.map((child) => child.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Download {
  seconds: number;
  bytes: number;
  lines: number;
  sha256: string;
  /** The peak RSS of process `pid` during the download less its RSS before; 0 without a pid. */
  rssGrowthBytes: number;
}

/** GETs `url` and reads the body to its end, hashing it, while sampling `pid`'s RSS. */
async function download(url: string, headers: Record<string, string>, pid?: number): Promise<Download> {
  const rssBefore = pid === undefined ? 0 : rssOf(pid);
  let rssPeak = rssBefore;
  const sampler =
    pid === undefined ? undefined : setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(pid))), 10);
  const started = performance.now();
  try {
    const response = await fetch(url, { headers });
    if (response.status !== 200 || !response.body) {
      throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
    }
    const hash = createHash("sha256");
    let bytes = 0;
    let lines = 0;
    for await (const chunk of response.body) {
      hash.update(chunk);
      bytes += chunk.length;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    }
    const seconds = (performance.now() - started) / 1000;
    return { seconds, bytes, lines, sha256: hash.digest("hex"), rssGrowthBytes: rssPeak - rssBefore };
  } finally {
    clearInterval(sampler);
  }
}

/** A process's resident set, from /proc (Linux). */
function rssOf(pid: number): number {
  const kilobytes = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kilobytes ?? 0) * 1024;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
