import type pg from "pg";
import { storedEntryWords } from "../search-words.js";

/**
 * D45's index on PostgreSQL: log_search holds each entry's words as a tsvector made of them as they are
 * (array_to_tsvector: no parser, no dictionary), so PostgreSQL finds what SQLite's FTS5 finds.
 */

/** A pool, a pool's client, or the migrating transaction's client. */
type Queries = Pick<pg.ClientBase, "query">;

/** The names of the workflows `ids` name, by id: what an entry is indexed under with its own words. */
export async function workflowNames(db: Queries, ids: string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; name: string }>(
    "SELECT id, name FROM workflows WHERE id = ANY($1::text[])",
    [[...new Set(ids)]],
  );
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** Entries a statement of indexEntriesWithoutWords reads and writes. */
const batchEntries = 500;

/**
 * Indexes every entry that log_search lacks, a batch at a time in id order: the migration that builds
 * the index over existing entries, and a copy from SQLite (whose FTS5 index is not a table to copy).
 */
export async function indexEntriesWithoutWords(db: Queries): Promise<void> {
  let after = "";
  for (;;) {
    const { rows } = await db.query<{
      id: string;
      name: string | null;
      trace_spans_json: string;
      final_output_json: string | null;
    }>(
      `SELECT l.id, w.name, l.trace_spans_json, l.final_output_json FROM log_entries l
       LEFT JOIN workflows w ON w.id = l.workflow_id
       WHERE l.id > $1 AND NOT EXISTS (SELECT 1 FROM log_search s WHERE s.log_id = l.id)
       ORDER BY l.id LIMIT $2`,
      [after, batchEntries],
    );
    if (rows.length === 0) return;
    await db.query(
      `INSERT INTO log_search (log_id, words)
       SELECT id, array_to_tsvector(string_to_array(words, ' ')) FROM unnest($1::text[], $2::text[]) AS v(id, words)`,
      [
        rows.map((row) => row.id),
        rows.map((row) => storedEntryWords(row.name, row.trace_spans_json, row.final_output_json).join(" ")),
      ],
    );
    after = rows[rows.length - 1]?.id ?? after;
  }
}
