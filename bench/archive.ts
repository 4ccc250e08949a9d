import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { createGunzip } from "node:zlib";
import { dayArchiver } from "../src/retention/archive.js";
import { archiveSink } from "../src/retention/archive-sinks.js";
import { generateExecutions } from "../src/seed/generate.js";
import { Random } from "../src/seed/random.js";
import { seedWorkspace } from "../src/seed/seed.js";
import { databaseFile } from "../src/store/database.js";
import type { ExecutionRecord } from "../src/store/records.js";
import { openSqlite } from "../src/store/sqlite-addon.js";
import { bareArchive } from "./support/bare-archive.js";
import { repoRoot } from "./support/processes.js";
import { type Bench, type BenchOptions, perSecond, ratio } from "./support/report.js";
import { timed } from "./support/sample.js";
import { type BenchStore, openBenchStore } from "./support/store.js";

const dayMs = 86_400_000;
const day = Date.parse("2026-11-01T00:00:00.000Z");
const sizes = { quick: [2_000, 5_000], full: [20_000, 200_000] };
/** Timed rounds of each side per size, after one untimed. */
const roundCounts = { quick: 1, full: 3 };

/**
 * D42's archive of one workspace-day (issue 52): entries per second through `archiveDay` to a local
 * folder (keyset pages of the store's list, export lines, gzip, the object read back and recorded) against
 * a bare loop that reads the same rows and writes the same gzip NDJSON, and the RSS the archive grew by,
 * for days of two sizes: memory must not follow the day's size.
 */
export const archiveBench: Bench = {
  name: "archive",
  async run(options: BenchOptions) {
    const rows: (string | number)[][] = [];
    const rounds = options.quick ? roundCounts.quick : roundCounts.full;
    for (const count of options.quick ? sizes.quick : sizes.full) rows.push(await compareAt(count, rounds));
    return [
      {
        title: "archive: one workspace-day written as gzip NDJSON to a local folder, entries per second",
        columns: [
          "entries",
          "archive /s",
          "bare /s",
          "archive/bare",
          "NDJSON MB",
          "RSS growth MB",
          "bare RSS growth MB",
        ],
        rows,
        note:
          "bare: one SQL statement in keyset pages on a second connection, each row's line spliced from its " +
          "stored JSON texts (no parse, no view), gzipped to a file flushed to disk; the bench checks both " +
          "wrote the same lines. archive also reads its object back and records it. RSS growth: the " +
          "archive's peak RSS less the RSS before it, the day archived again in a fresh process; bare RSS " +
          "growth: the same of the bare loop, the floor of any code writing these lines at this rate.",
      },
    ];
  },
};

async function compareAt(count: number, rounds: number): Promise<(string | number)[]> {
  const bench = await openBenchStore();
  const folder = mkdtempSync(path.join(tmpdir(), "flowlog-bench-archive-"));
  try {
    const entries = await seedDay(bench, count);
    const file = databaseFile(bench.dataDir);
    // Both sides once untimed (the file's pages in the OS cache for either), then in turns, the median kept.
    const archiveDay = dayArchiver(bench.store, archiveSink({ kind: "file", directory: folder }));
    const bareTarget = path.join(folder, "bare.ndjson.gz");
    const bareSeconds: number[] = [];
    const archiveSeconds: number[] = [];
    for (let round = 0; round <= rounds; round++) {
      const bare = await timed(() => bareArchive(file, bench.workspaceId, day, bareTarget));
      forgetArchives(bench);
      const archived = await timed(() => archiveDay(bench.workspaceId, day));
      if (archived.value.entries !== entries || bare.value.entries !== entries) {
        throw new Error(
          `archive wrote ${archived.value.entries} and bare ${bare.value.entries} of ${entries}`,
        );
      }
      if (round === 0) continue;
      bareSeconds.push(bare.seconds);
      archiveSeconds.push(archived.seconds);
    }
    const ndjson = await gunzipped(path.join(folder, bench.workspaceId, "2026-11-01.ndjson.gz"));
    if (ndjson.sha256 !== (await gunzipped(bareTarget)).sha256) {
      throw new Error("the bare loop wrote other lines than the archive");
    }
    forgetArchives(bench);
    const memory = await archiveMemory(bench, path.join(folder, "memory"), "archive");
    const bareMemory = await archiveMemory(bench, path.join(folder, "memory-bare"), "bare");
    const [bare, archived] = [median(bareSeconds), median(archiveSeconds)];
    return [
      perSecond(entries),
      perSecond(entries / archived),
      perSecond(entries / bare),
      ratio(bare / archived),
      (ndjson.bytes / 1e6).toFixed(1),
      ((memory.rssPeakBytes - memory.rssBeforeBytes) / 1e6).toFixed(1),
      ((bareMemory.rssPeakBytes - bareMemory.rssBeforeBytes) / 1e6).toFixed(1),
    ];
  } finally {
    rmSync(folder, { recursive: true, force: true });
    await bench.dispose();
  }
}

/** `count` of the seeder's executions, all started on `day` (UTC), written a thousand per transaction. */
async function seedDay(bench: BenchStore, count: number): Promise<number> {
  await seedWorkspace(bench.store, { workspaceId: bench.workspaceId, executions: 0, seed: "bench" });
  const workflows = await bench.store.workflows.listWorkflows(bench.workspaceId);
  // The generator spreads starts over the day before `now` less its last half hour.
  const request = { workflows, count, days: 1, now: day + dayMs + 29 * 60_000, billedUserId: bench.user.id };
  let batch: ExecutionRecord[] = [];
  let written = 0;
  for await (const record of generateExecutions(new Random("bench:archive"), request)) {
    if (record.entry.startedAt < day || record.entry.startedAt >= day + dayMs) continue;
    batch.push(record);
    if (batch.length === 1_000) {
      written += await bench.store.logs.insertExecutions(batch);
      batch = [];
    }
  }
  return written + (await bench.store.logs.insertExecutions(batch));
}

/** The catalogue emptied, so that the day is archived again rather than answered from its record. */
function forgetArchives(bench: BenchStore): void {
  const db = openSqlite(databaseFile(bench.dataDir));
  try {
    db.prepare("DELETE FROM archives").run();
  } finally {
    db.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** The size and SHA-256 of a gzip file's content. */
async function gunzipped(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  await pipeline(createReadStream(file), createGunzip(), async (chunks: AsyncIterable<Buffer>) => {
    for await (const chunk of chunks) {
      hash.update(chunk);
      bytes += chunk.length;
    }
  });
  return { bytes, sha256: hash.digest("hex") };
}

/**
 * The RSS of archiving the day again, or of the bare loop writing it, in a fresh process
 * (support/archive-memory.ts).
 */
async function archiveMemory(
  bench: BenchStore,
  folder: string,
  side: "archive" | "bare",
): Promise<{ rssBeforeBytes: number; rssPeakBytes: number }> {
  const script = path.join(repoRoot, "bench/support/archive-memory.ts");
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", script, bench.dataDir, bench.workspaceId, String(day), folder, side],
    { cwd: repoRoot },
  );
  return JSON.parse(stdout) as { rssBeforeBytes: number; rssPeakBytes: number };
}
