import type pg from "pg";
import type { LogFilter } from "../log-list-sql.js";
import { type SearchTerm, storedEntryWords } from "../search-words.js";

/**
 * D45's index on PostgreSQL: log_search holds each entry's words as a tsvector made of them as they are
 * (array_to_tsvector: no parser, no dictionary), so PostgreSQL finds what SQLite's FTS5 finds.
 */

/**
 * The lexemes an entry's level and trigger add to its words, as SQL over two text expressions. They
 * start with `~`, which no word holds (search-words.ts), so no query word, whole or prefix, matches one.
 * A search that filters by level or by one trigger also asks for these (searchableFilter), so the GIN
 * index intersects them with the words instead of the list checking each match's level (D45).
 */
export const facetLexemes = (level: string, trigger: string) =>
  `ARRAY['~level:' || ${level}, '~trigger:' || ${trigger}]`;

/** The filter's search with the lexemes of its level and of its one trigger, if it has them (facetLexemes). */
export function searchableFilter(filter: LogFilter): LogFilter {
  if (!filter.search) return filter;
  const facets: SearchTerm[] = [];
  if (filter.level !== undefined) facets.push({ word: `~level:${filter.level}`, prefix: false });
  if (filter.triggers?.length === 1) facets.push({ word: `~trigger:${filter.triggers[0]}`, prefix: false });
  return facets.length === 0 ? filter : { ...filter, search: [...filter.search, ...facets] };
}

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
      level: string;
      trigger: string;
      trace_spans_json: string;
      final_output_json: string | null;
    }>(
      `SELECT l.id, w.name, l.level, l.trigger, l.trace_spans_json, l.final_output_json FROM log_entries l
       LEFT JOIN workflows w ON w.id = l.workflow_id
       WHERE l.id > $1 AND NOT EXISTS (SELECT 1 FROM log_search s WHERE s.log_id = l.id)
       ORDER BY l.id LIMIT $2`,
      [after, batchEntries],
    );
    if (rows.length === 0) return;
    await db.query(
      `INSERT INTO log_search (log_id, words)
       SELECT id, array_to_tsvector(string_to_array(words, ' ') || ${facetLexemes("level", "trigger")})
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(id, words, level, trigger)`,
      [
        rows.map((row) => row.id),
        rows.map((row) => storedEntryWords(row.name, row.trace_spans_json, row.final_output_json).join(" ")),
        rows.map((row) => row.level),
        rows.map((row) => row.trigger),
      ],
    );
    after = rows[rows.length - 1]?.id ?? after;
  }
}
