import type { LogEntry } from "../../../gen/flowlog/logs/v1/log_entry_pb.js";
import { exportLine } from "./export-lines.js";

/**
 * The CSV form of an export (D45): a column per top-level field of the export line, in its order, the
 * same whatever the request asked for, so that files of one kind line up; a part left out is empty.
 */
export const csvColumns = [
  "id",
  "workflowId",
  "executionId",
  "level",
  "trigger",
  "startedAt",
  "endedAt",
  "totalDurationMs",
  "cost",
  "files",
  "workflow",
  "executionData",
] as const;

/** The header row; rows end with CRLF (RFC 4180). */
export const csvHeader = `${csvColumns.join(",")}\r\n`;

/**
 * One entry as a CSV row, read from its export line so that every cell says what the NDJSON says:
 * strings as they are, numbers and nested values as their JSON text, null and absent as an empty cell.
 */
export function csvRow(entry: LogEntry): string {
  const fields = JSON.parse(exportLine(entry)) as Record<string, unknown>;
  return `${csvColumns.map((column) => csvCell(fields[column])).join(",")}\r\n`;
}

function csvCell(value: unknown): string {
  if (value === undefined || value === null) return "";
  return quoted(defused(typeof value === "string" ? value : JSON.stringify(value)));
}

/**
 * A spreadsheet runs a cell that begins with =, +, - or @ (or a tab or carriage return before one) as a
 * formula: such a cell is prefixed with a single quote, OWASP's advice, which shows it as text. Only a
 * negative number in `files` or an id of someone else's making can begin so; a reader that wants the
 * value back strips the quote from a cell that begins with one of those after it.
 */
function defused(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/** RFC 4180: a cell holding a comma, a quote or a line break is quoted, its quotes doubled. */
function quoted(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
