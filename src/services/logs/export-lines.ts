import type { LogEntry } from "../../../gen/flowlog/logs/v1/log_entry_pb.js";
import { logEntryJson } from "../../../gen/flowlog/logs/v1/logs_service_serializers.js";
import type { LogFilter, Order, PageKey } from "../../store/log-list-sql.js";
import type { Store } from "../../store/store.js";
import { type EntryView, logEntryView } from "./log-entry-view.js";
import { workflowsOf } from "./workflow-summaries.js";

/**
 * Which parts of the detail form an export shows (D45): details=full adds the workflow and the full cost,
 * the include flags the trace spans and the final output. Never `limits`, which tells the caller's state
 * at the time of a call, not the entry's.
 */
export type ExportForm = Omit<EntryView, "limits">;

/** D42's archive keeps everything an entry has. */
export const wholeEntry: ExportForm = { full: true, traceSpans: true, finalOutput: true };

/**
 * Where an entry keeps its line once written: an export measures its batches by them, then REST writes
 * them. A symbol-keyed member, which the writers and reflection do not see, rather than a WeakMap, whose
 * entries cost the garbage collector an ephemeron each (issue 53: 200 per page of an export).
 */
const writtenLine = Symbol("exportLine");

/**
 * The export format (D45), which D42's archive writes too: one entry per line, each the entry's form as
 * GetLog answers it over REST/JSON (the same view, the same generated writer). Computed once per entry.
 */
export function exportLine(entry: LogEntry): string {
  const written = entry as LogEntry & { [writtenLine]?: string };
  let line = written[writtenLine];
  if (line === undefined) {
    line = `${logEntryJson(entry)}\n`;
    written[writtenLine] = line;
  }
  return line;
}

/**
 * The entries `filter` selects, in the list's order (D8), in `form`, a keyset page at a time so that
 * memory holds one page whatever the range holds: the store's list, with the columns the form shows.
 * `signal` (the caller leaving) ends the reading between pages and cancels a page being read (D46).
 */
export async function* exportPages(
  store: Store,
  filter: LogFilter,
  {
    order,
    pageSize,
    form,
    signal,
  }: { order: Order; pageSize: number; form: ExportForm; signal?: AbortSignal },
): AsyncGenerator<LogEntry[]> {
  const read = {
    withCostDetail: form.full,
    withTraceSpans: form.traceSpans,
    withFinalOutput: form.finalOutput,
  };
  let after: PageKey | undefined;
  do {
    signal?.throwIfAborted();
    const page = await store.logs.list(filter, { order, limit: pageSize, after, ...read }, signal);
    const workflows = form.full ? await workflowsOf(store, page.entries) : new Map();
    yield page.entries.map((entry) => logEntryView(entry, workflows.get(entry.workflowId), form));
    after = page.next;
  } while (after);
}
