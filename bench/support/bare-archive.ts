import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { bareExportPages } from "./bare-export-lines.js";

/**
 * The archive bench's baseline: the bare loop's lines (bare-export-lines.ts) of a workspace's entries with
 * startedAt in [from, to], gzipped to `target`, flushed to disk.
 */
export async function bareArchive(
  file: string,
  { workspaceId, from, to }: { workspaceId: string; from: number; to: number },
  target: string,
): Promise<{ entries: number }> {
  let entries = 0;
  async function* lines() {
    for await (const page of bareExportPages(file, { workspaceId, from, to })) {
      entries += page.entries;
      yield page.text;
    }
  }
  await pipeline(Readable.from(lines()), createGzip(), createWriteStream(target, { flush: true }));
  return { entries };
}
