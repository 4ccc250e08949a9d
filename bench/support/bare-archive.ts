import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { bareExportPages } from "./bare-export-lines.js";

const dayMs = 86_400_000;

/**
 * The archive bench's baseline: the bare loop's lines (bare-export-lines.ts) of a workspace's entries that
 * started on the UTC day from `dayStartMs`, gzipped to `target`, flushed to disk.
 */
export async function bareArchive(
  file: string,
  workspaceId: string,
  dayStartMs: number,
  target: string,
): Promise<{ entries: number }> {
  const day = { workspaceId, from: dayStartMs, to: dayStartMs + dayMs - 1 };
  let entries = 0;
  async function* lines() {
    for await (const page of bareExportPages(file, day)) {
      entries += page.entries;
      yield page.text;
    }
  }
  await pipeline(Readable.from(lines()), createGzip(), createWriteStream(target, { flush: true }));
  return { entries };
}
