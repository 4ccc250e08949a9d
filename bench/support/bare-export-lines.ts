import { openSqlite } from "../../src/store/sqlite-addon.js";
import { isoFromMs } from "../../src/util/time.js";

interface BareRow {
  id: string;
  workflow_id: string;
  execution_id: string;
  level: string;
  trigger: string;
  started_at: number;
  ended_at: number;
  total_duration_ms: number;
  cost_total: number;
  cost_json: string;
  files_json: string | null;
  name: string | null;
  description: string | null;
  trace_spans_json: string;
  final_output_json: string | null;
}

/** One keyset page of export lines, joined, and how many entries it holds. */
export interface BarePage {
  text: string;
  entries: number;
}

/**
 * The least an export could do, the baseline of the archive and export benches: a workspace's rows with
 * startedAt in [from, to], newest first (the list's order), one SQL statement in keyset pages of 200 on a
 * read-only connection of its own, each row's line spliced from its stored JSON texts with no parse and no
 * view: the lines of the whole detail form (D45's export with everything, D42's archive).
 */
export async function* bareExportPages(
  file: string,
  {
    workspaceId,
    from = 0,
    to = Number.MAX_SAFE_INTEGER,
  }: { workspaceId: string; from?: number; to?: number },
): AsyncGenerator<BarePage> {
  const db = openSqlite(file, { readonly: true });
  try {
    const page = db.prepare(
      `SELECT l.id, l.workflow_id, l.execution_id, l.level, l.trigger, l.started_at, l.ended_at,
         l.total_duration_ms, l.cost_total, l.cost_json, l.files_json, w.name, w.description, l.trace_spans_json,
         l.final_output_json
       FROM log_entries l LEFT JOIN workflows w ON w.id = l.workflow_id
       WHERE l.workspace_id = @workspaceId AND l.started_at >= @from
         AND (l.started_at, l.id) < (@afterStartedAt, @afterId)
       ORDER BY l.started_at DESC, l.id DESC LIMIT 200`,
    );
    // `to` is the first cursor: (started_at, id) < (to + 1, "") is started_at <= to. A bound of its own beside
    // the cursor would be the one SQLite starts the index range at, every page scanning down from it.
    let after = { afterStartedAt: to + 1, afterId: "" };
    for (;;) {
      const rows = page.all({ workspaceId, from, ...after }) as BareRow[];
      if (rows.length === 0) return;
      yield { text: rows.map(bareLine).join(""), entries: rows.length };
      const last = rows[rows.length - 1] as BareRow;
      after = { afterStartedAt: last.started_at, afterId: last.id };
    }
  } finally {
    db.close();
  }
}

function bareLine(row: BareRow): string {
  const q = JSON.stringify;
  return (
    `{"id":${q(row.id)},"workflowId":${q(row.workflow_id)},"executionId":${q(row.execution_id)},` +
    `"level":${q(row.level)},"trigger":${q(row.trigger)},"startedAt":"${isoFromMs(row.started_at)}",` +
    `"endedAt":"${isoFromMs(row.ended_at)}","totalDurationMs":${row.total_duration_ms},` +
    `"cost":{"total":${row.cost_total},${row.cost_json.slice(1)},"files":${row.files_json ?? "null"},"workflow":{"id":${q(row.workflow_id)},` +
    `"name":${q(row.name ?? "")},"description":${q(row.description ?? "")}},"executionData":` +
    `{"traceSpans":${row.trace_spans_json},"finalOutput":${row.final_output_json ?? "null"}}}\n`
  );
}
