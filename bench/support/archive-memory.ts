/**
 * The archive bench's memory reading (bench/archive.ts), in a process of its own so that nothing the bench
 * did before (seeding the day) sits in its heap:
 *
 *     node --import tsx bench/support/archive-memory.ts <data dir> <workspace id> <day start ms> <folder>
 *
 * archives the workspace-day to the folder once and prints `{"rssBeforeBytes": …, "rssPeakBytes": …}`:
 * the RSS with the store open, and the most it reached while archiving, sampled every 5 ms.
 */
import { dayArchiver } from "../../src/retention/archive.js";
import { archiveSink } from "../../src/retention/archive-sinks.js";
import { openStore } from "../../src/store/store.js";

const [dataDir = "", workspaceId = "", dayStart = "", folder = ""] = process.argv.slice(2);
const store = openStore({ dataDir });
const archiveDay = dayArchiver(store, archiveSink({ kind: "file", directory: folder }));
const rssBeforeBytes = process.memoryUsage.rss();
let rssPeakBytes = rssBeforeBytes;
const sampler = setInterval(() => {
  rssPeakBytes = Math.max(rssPeakBytes, process.memoryUsage.rss());
}, 5);
await archiveDay(workspaceId, Number(dayStart));
clearInterval(sampler);
await store.close();
process.stdout.write(`${JSON.stringify({ rssBeforeBytes, rssPeakBytes })}\n`);
