import { logEntryJson } from "../../../gen/flowlog/logs/v1/logs_service_serializers.js";
import type { LogFilter, Order, PageKey } from "../../store/log-list-sql.js";
import type { ListedEntryRecord, WorkflowSummaryRecord } from "../../store/records.js";
import type { Store } from "../../store/store.js";
import { logEntryView } from "./log-entry-view.js";
import { workflowsOf } from "./logs-service.js";

/**
 * The export format (D45), which D42's archive writes too: one entry per line, each the entry's detail form
 * as GetLog answers it over REST/JSON (the same view, the same generated writer), trace spans and final
 * output included, less `limits`, which tells the caller's state at the time of a call, not the entry's.
 */
export function exportLine(entry: ListedEntryRecord, workflow: WorkflowSummaryRecord | undefined): string {
  return `${logEntryJson(logEntryView(entry, workflow, detailForm))}\n`;
}

const detailForm = { full: true, traceSpans: true, finalOutput: true };

/**
 * One keyset page of export lines, and the key to read the next page after (absent after the last). Lines
 * stay apart: a page joined into one string is a large object, which only a full collection frees.
 */
export interface ExportPage {
  lines: string[];
  next?: PageKey;
}

/**
 * The export lines of the entries `filter` selects, in the list's order (D8), a keyset page at a time so
 * that memory holds one page whatever the range holds: the store's list, with every heavy column.
 */
export async function* exportPages(
  store: Store,
  filter: LogFilter,
  { order, pageSize, signal }: { order: Order; pageSize: number; signal?: AbortSignal },
): AsyncGenerator<ExportPage> {
  let after: PageKey | undefined;
  do {
    signal?.throwIfAborted();
    const page = await store.logs.list(
      filter,
      { order, limit: pageSize, after, withCostDetail: true, withTraceSpans: true, withFinalOutput: true },
      signal,
    );
    const workflows = await workflowsOf(store, page.entries);
    const lines = page.entries.map((entry) => exportLine(entry, workflows.get(entry.workflowId)));
    yield { lines, next: page.next };
    after = page.next;
  } while (after);
}
