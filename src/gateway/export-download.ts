import type { JsonObject } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import type { ExportLogsResponse } from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { toPublicError } from "../errors/public-error.js";
import { logger } from "../logging/logger.js";
import type { JsonStream } from "../rpc/json-stream.js";
import type { NodeResponse } from "../rpc/node-http.js";
import { csvHeader, csvRow } from "../services/logs/export-csv.js";
import { exportLine } from "../services/logs/export-lines.js";
import { writePaced } from "./paced-write.js";
import { openStream } from "./stream-opening.js";

/**
 * ExportLogs on REST (D45): the stream's entries as one file, `format=ndjson` (the default: the export
 * lines, as D42's archive writes them) or `format=csv`, in a chunked body written at the client's pace
 * (paced-write.ts). The first message is awaited before anything is written, so a refused export is
 * answered as any REST refusal. Once the status is sent, an error can only cut the transfer short (no
 * final chunk, or a reset HTTP/2 stream): the client sees a failed download, never a short file that
 * looks whole.
 */
export async function answerExportDownload(
  res: NodeResponse,
  stream: JsonStream,
  request: JsonObject,
  writeProblem: (error: ConnectError) => void,
  copyHeaders: (header: Headers) => void,
): Promise<void> {
  const opened = await openStream(stream, writeProblem, copyHeaders);
  if (!opened) return;
  const { messages, first } = opened;
  // The .proto's rule has held `format` to ndjson or csv before the first message.
  const csv = request.format === "csv";
  res.writeHead(200, {
    "content-type": csv ? "text/csv; charset=utf-8" : "application/x-ndjson",
    "content-disposition": `attachment; filename="${fileName(request.workspaceId, csv ? "csv" : "ndjson")}"`,
    "cache-control": "no-store",
    // A proxy that buffers answers (nginx) would hold the whole export.
    "x-accel-buffering": "no",
  });
  const closed = new Promise<void>((resolve) => res.once("close", resolve));
  const write = csv ? csvRow : exportLine;
  try {
    if (csv) await writePaced(res, csvHeader, closed);
    for (let next = first; !next.done && !res.destroyed; next = await messages.next()) {
      const { entries } = next.value as ExportLogsResponse;
      await writePaced(res, entries.map(write).join(""), closed);
    }
  } catch (error) {
    const cause = toPublicError(error, "log export");
    logger.warn({ err: cause }, "a log export failed after its body began; its transfer is cut short");
    res.destroy();
    return;
  } finally {
    await messages.return?.();
  }
  if (!res.destroyed) res.end();
}

/** `flowlog-logs-<workspaceId>.<ext>`; the workspace was found, but the name keeps to safe characters. */
function fileName(workspaceId: unknown, extension: string): string {
  return `flowlog-logs-${String(workspaceId).replace(/[^A-Za-z0-9_-]/g, "_")}.${extension}`;
}
