/**
 * The archive bench's memory reading (bench/archive.ts), in a process of its own so that nothing the bench
 * did before (seeding the day) sits in its heap:
 *
 *     node --import tsx bench/support/archive-memory.ts <data dir> <workspace id> <day start ms> <folder> [archive|bare]
 *
 * archives the workspace-day to the folder once (or, `bare`, writes it with the bench's bare loop) and prints
 * `{"rssBeforeBytes": …, "rssPeakBytes": …}`: the RSS with the store open, and the most it reached while
 * writing, sampled every 5 ms.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { dayArchiver } from "../../src/retention/archive.js";
import { archiveSink } from "../../src/retention/archive-sinks.js";
import { databaseFile } from "../../src/store/database.js";
import { openStore } from "../../src/store/store.js";
import { bareArchive } from "./bare-archive.js";

const [dataDir = "", workspaceId = "", dayStart = "", folder = "", side = "archive"] = process.argv.slice(2);
if (side !== "archive" && side !== "bare") throw new Error(`the side is archive or bare, not ${side}`);
mkdirSync(folder, { recursive: true });
const store = openStore({ dataDir });
const archiveDay = dayArchiver(store, archiveSink({ kind: "file", directory: folder }));
const from = Number(dayStart);
const rssBeforeBytes = process.memoryUsage.rss();
let rssPeakBytes = rssBeforeBytes;
const sampler = setInterval(() => {
  rssPeakBytes = Math.max(rssPeakBytes, process.memoryUsage.rss());
}, 5);
if (side === "archive") await archiveDay(workspaceId, from);
else {
  // The bare loop's own connection, as in the timed rounds; the store stays open, as the archive's does.
  await bareArchive(databaseFile(dataDir), workspaceId, from, path.join(folder, "bare.ndjson.gz"));
}
clearInterval(sampler);
await store.close();
process.stdout.write(`${JSON.stringify({ rssBeforeBytes, rssPeakBytes })}\n`);
