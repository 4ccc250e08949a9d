import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import type { ArchiveTarget } from "../config/archive-settings.js";
import { exportLine, exportPages, wholeEntry } from "../services/logs/export-lines.js";
import type { ArchiveRecord } from "../store/archives-store.js";
import type { LogFilter } from "../store/log-list-sql.js";
import type { Store } from "../store/store.js";
import { isoDayFromMs } from "../util/time.js";
import { type ArchiveSink, archiveSink, measuringStream, type ObjectMeasure } from "./archive-sinks.js";

/**
 * What D41's purge calls before it deletes a workspace's UTC day (whole days only while archiving is on):
 * resolves once the day is archived, verified and recorded, with its record, and rejects otherwise, when
 * the purge must not delete.
 */
export type ArchiveDay = (
  workspaceId: string,
  dayStartMs: number,
  signal?: AbortSignal,
) => Promise<ArchiveRecord>;

const dayMs = 86_400_000;

/** Entries per keyset page: what memory holds of a day at once, whatever the day holds. */
const pageSize = 100;

/**
 * Pages read ahead of gzip at most. A page's lines go to gzip as one string, as the archive bench's bare
 * loop hands them: in 32 KB chunks built a line at a time, the archive ran at 0.61x to 0.66x of that loop;
 * a page at a time, at 0.93x to 1.04x (issue 52). Memory holds a few pages whatever the day holds.
 */
const pagesAhead = 2;

/**
 * D42's archive of one workspace-day, to the configured target, or undefined when archiving is off (no
 * FLOWLOG_ARCHIVE_URL). The purge takes it as its optional `archiveDay` dependency.
 */
export function archiveDayFor(
  target: ArchiveTarget | undefined,
  store: Store,
  clock: () => number = Date.now,
): ArchiveDay | undefined {
  return target && dayArchiver(store, archiveSink(target), clock);
}

/**
 * The archive of one workspace-day on `sink` (D42). The day's entries, by startedAt in UTC, are read in
 * keyset pages in the list's order, written as export lines (D45), gzipped and streamed to the object
 * `<workspaceId>/<yyyy-mm-dd>.ndjson.gz` while their size and SHA-256 are taken; the object is then read
 * back, and only when it measures the same is it recorded in the catalogue.
 *
 * - Idempotent: a day already recorded is answered from its record and not written again, since the purge
 *   may have deleted part of it since; the object then holds more than the store does.
 * - A run interrupted anywhere before the record (an error, the process killed) leaves nothing recorded,
 *   and the next run writes the same name again: the name is a function of the workspace and the day.
 */
export function dayArchiver(store: Store, sink: ArchiveSink, clock: () => number = Date.now): ArchiveDay {
  return async (workspaceId, dayStartMs, signal) => {
    // The key is a path on a folder target: an id is only ever these characters (util/ids.ts).
    if (!/^[A-Za-z0-9_-]+$/.test(workspaceId))
      throw new RangeError("workspaceId must be a workspace id (letters, digits, _ and -)");
    if (!Number.isInteger(dayStartMs) || dayStartMs % dayMs !== 0)
      throw new RangeError(`dayStartMs must be the start of a UTC day, not ${dayStartMs}`);
    const day = isoDayFromMs(dayStartMs);
    const recorded = await store.archives.get(workspaceId, day);
    if (recorded) return recorded;
    const key = `${workspaceId}/${day}.ndjson.gz`;
    const filter = { workspaceId, startedFrom: dayStartMs, startedTo: dayStartMs + dayMs - 1 };
    const { entries, measured } = await writeObject(store, filter, sink, key, signal);
    const stored = await sink.readBack(key);
    if (stored.bytes !== measured.bytes || stored.sha256 !== measured.sha256) {
      throw new ArchiveVerificationError(
        `archive ${sink.urlOf(key)} reads back as ${stored.bytes} bytes, SHA-256 ${stored.sha256}; ` +
          `${measured.bytes} bytes, SHA-256 ${measured.sha256} were written`,
      );
    }
    const archive = {
      workspaceId,
      day,
      objectUrl: sink.urlOf(key),
      entries,
      ...measured,
      writtenAt: clock(),
    };
    await store.archives.record(archive);
    return archive;
  };
}

/** Streams the export lines of the entries `filter` selects, gzipped, as the object `key`, measuring it. */
async function writeObject(
  store: Store,
  filter: LogFilter,
  sink: ArchiveSink,
  key: string,
  signal: AbortSignal | undefined,
): Promise<{ entries: number; measured: ObjectMeasure }> {
  let entries = 0;
  const pages = async function* () {
    for await (const page of exportPages(store, filter, {
      order: "desc",
      pageSize,
      form: wholeEntry,
      signal,
    })) {
      entries += page.length;
      yield page.map(exportLine).join("");
    }
  };
  const written = measuringStream();
  await Promise.all([
    pipeline(Readable.from(pages(), { highWaterMark: pagesAhead }), createGzip(), written, { signal }),
    // A store that fails stops the reading too, rather than leave it waiting on a reader gone.
    sink.write(key, written, signal).catch((error: unknown) => {
      written.destroy(error as Error);
      throw error;
    }),
  ]);
  return { entries, measured: written.measure() };
}

export class ArchiveVerificationError extends Error {
  override name = "ArchiveVerificationError";
}
