import { type ExecutionRows, stateKeys } from "../log-rows.js";
import type { FanOutIntent } from "../outbox-store.js";
import { entryWords } from "../search-words.js";
import { facetLexemes } from "./search-index.js";
import { logWritesChannel } from "./write-notices.js";

type Entry = ExecutionRows["entry"];

/** The columns of log_entries as a statement binds them, with their types. */
const entryColumns: [name: string, type: string, value: (entry: Entry) => unknown][] = [
  ["id", "text", (e) => e.id],
  ["workspace_id", "text", (e) => e.workspaceId],
  ["workflow_id", "text", (e) => e.workflowId],
  ["folder_id", "text", (e) => e.folderId],
  ["execution_id", "text", (e) => e.executionId],
  ["billed_user_id", "text", (e) => e.billedUserId],
  ["level", "text", (e) => e.level],
  ["trigger", "text", (e) => e.trigger],
  ["started_at", "bigint", (e) => e.startedAt],
  ["ended_at", "bigint", (e) => e.endedAt],
  ["total_duration_ms", "bigint", (e) => e.totalDurationMs],
  ["cost_total", "double precision", (e) => e.costTotal],
  ["cost_json", "text", (e) => e.costJson],
  ["cost_canonical", "integer", (e) => e.costCanonical],
  ["files_json", "text", (e) => e.filesJson],
  ["trace_spans_json", "text", (e) => e.traceSpansJson],
  ["trace_spans_canonical", "integer", (e) => e.traceSpansCanonical],
  ["final_output_json", "text", (e) => e.finalOutputJson],
];
const names = entryColumns.map(([name]) => name).join(", ");

/**
 * Executions one statement writes at most: each binds its columns, its state's key and version (D47), its
 * models (three arrays: names, costs and tokens), its words (D45) and at most one distinct state (two
 * values); PostgreSQL takes 65,535 values a statement.
 */
export const executionsPerStatement = Math.floor(65_000 / (entryColumns.length + 8));

/** A new entry's fan-out intent (issue 12) and the time it is written. */
export type TimedFanOut = FanOutIntent & { now: number };

/**
 * Writes executions (at most executionsPerStatement) in one statement: one round trip, atomic on its
 * own. Each value is a plain bound parameter, as the driver sends it, with no JSON or array literal to
 * encode and parse again (either cost more than the insert's own work), and the entries' large rows
 * are inserted straight from their VALUES; only their ids, state keys and models are joined after. Only entries new by execution
 * id (D17) get their models, their state and its link, and with `fanOut` their notification outbox row
 * (issue 12), and their words in log_search (D45, with their workflow's name from `workflowNames`); a
 * write of new entries notifies the tails (D44, write-notices.ts); each distinct state of the statement is bound once (stateKeys). Returns the statement
 * and its values; it counts the new entries.
 */
export function insertStatement(
  rows: ExecutionRows[],
  workflowNames: Map<string, string>,
  fanOut?: TimedFanOut,
): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const bind = (value: unknown, type: string) => `$${values.push(value)}::${type}`;
  const states: string[] = [];
  const stateKey = stateKeys((key, json) => states.push(`(${bind(key, "bytea")}, ${bind(json, "text")})`));
  const entries: string[] = [];
  const links: string[] = [];
  for (const { entry, models, workflowState, workflowVersion, contentWords } of rows) {
    const columns = entryColumns.map(([, type, value]) => bind(value(entry), type));
    entries.push(`(${columns.join(", ")})`);
    const modelColumns = [
      bind(
        models.map((m) => m.model),
        "text[]",
      ),
      bind(
        models.map((m) => m.costNanoUsd),
        "bigint[]",
      ),
      bind(
        models.map((m) => m.tokens),
        "bigint[]",
      ),
    ];
    const state = `${bind(stateKey(workflowState), "bytea")}, ${bind(workflowVersion, "integer")}`;
    const words = bind(entryWords(workflowNames.get(entry.workflowId), contentWords), "text[]");
    links.push(`(${columns[0]}, ${state}, ${modelColumns.join(", ")}, ${words})`);
  }
  const outbox = fanOut
    ? `, fan_out AS (
    INSERT INTO notification_outbox
      (log_id, workspace_id, workflow_id, task_queue, trace_parent, trace_state, created_at, not_before)
    SELECT ${bind(fanOut.logId, "text")}, ${bind(fanOut.workspaceId, "text")}, ${bind(fanOut.workflowId, "text")},
      ${bind(fanOut.taskQueue, "text")}, ${bind(fanOut.traceparent ?? null, "text")}, ${bind(fanOut.tracestate ?? null, "text")},
      ${bind(fanOut.now, "bigint")}, ${bind(fanOut.now, "bigint")}
    FROM entries
    ON CONFLICT DO NOTHING
  )`
    : "";
  const text = `
  WITH entries AS (
    INSERT INTO log_entries (${names}) VALUES ${entries.join(", ")}
    ON CONFLICT (execution_id) DO NOTHING
    RETURNING id, workspace_id, execution_id, started_at, level, trigger
  ), new_entries AS (
    SELECT e.*, l.state_hash, l.workflow_version, l.models, l.model_costs, l.model_tokens, l.words
    FROM entries e
    JOIN (VALUES ${links.join(", ")})
      AS l(id, state_hash, workflow_version, models, model_costs, model_tokens, words) ON l.id = e.id
  ), models AS (
    INSERT INTO log_entry_models (workspace_id, model, started_at, log_id, cost_nano_usd, tokens)
    SELECT workspace_id, m.model, started_at, id, m.cost_nano_usd, m.tokens
    FROM new_entries, unnest(models, model_costs, model_tokens) AS m(model, cost_nano_usd, tokens)
    ON CONFLICT DO NOTHING
  ), states AS (
    INSERT INTO workflow_states (hash, workflow_state_json)
    SELECT hash, json FROM (VALUES ${states.join(", ")}) AS s(hash, json)
    WHERE hash IN (SELECT state_hash FROM new_entries)
    ON CONFLICT DO NOTHING
  ), links AS (
    INSERT INTO execution_states (execution_id, state_hash, workflow_version)
    SELECT execution_id, state_hash, workflow_version FROM new_entries
    ON CONFLICT DO NOTHING
  ), words AS (
    INSERT INTO log_search (log_id, words)
    SELECT id, array_to_tsvector(words || ${facetLexemes("level", "trigger")}) FROM new_entries
  ), notice AS (
    SELECT pg_notify('${logWritesChannel}', pg_current_xact_id()::text) FROM (SELECT FROM entries LIMIT 1) written
  )${outbox}
  SELECT (SELECT count(*)::integer FROM entries) AS inserted, (SELECT count(*) FROM notice) AS notified`;
  return { text, values };
}
