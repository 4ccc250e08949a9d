import type { LogEntry } from "../../../gen/flowlog/logs/v1/log_entry_pb.js";
import type { Store } from "../../store/store.js";
import { exportLine, exportPages } from "./export-lines.js";
import type { ExportLogsQuery } from "./export-logs-request.js";

/**
 * Entries per keyset page of an export, and so at most per message: few enough that a page read blocks
 * SQLite's thread briefly and memory holds little, many enough that statements are few.
 */
export const exportPageSize = 200;

/**
 * A message holds more than one entry only while their export lines stay within this: under the 4 MiB
 * that gRPC clients accept by default, whatever the entries hold.
 */
export const maxBatchChars = 1024 * 1024;

/**
 * D45's export as batches of entries, one message each, in the list's order: a keyset page at a time,
 * cut where a batch's lines would pass `maxBatchChars`. The generator is pulled at the client's pace
 * (each protocol's writer waits for the socket to drain), so memory holds one page whatever the export
 * holds, and `signal` (the client leaving) ends it between pages or during one (D46).
 */
export async function* exportBatches(
  store: Store,
  { filter, order, form }: ExportLogsQuery,
  signal: AbortSignal,
): AsyncGenerator<LogEntry[]> {
  for await (const page of exportPages(store, filter, { order, pageSize: exportPageSize, form, signal })) {
    let batch: LogEntry[] = [];
    let chars = 0;
    for (const entry of page) {
      const size = exportLine(entry).length;
      if (batch.length > 0 && chars + size > maxBatchChars) {
        yield batch;
        batch = [];
        chars = 0;
      }
      batch.push(entry);
      chars += size;
    }
    if (batch.length > 0) yield batch;
  }
}
