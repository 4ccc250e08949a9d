import { setTimeout as sleep } from "node:timers/promises";
import { type Binder, filteredEntries, type LogFilter } from "./log-list-sql.js";

/**
 * Deleting log entries with what hangs off them (D41's purge, D43's DeleteLogs), the part both stores
 * share: which entries a batch takes, and what the deletion answers.
 */

/** What one deletion removed, per kind of row. */
export interface DeletedCounts {
  entries: number;
  /** Workflow states (D13 snapshots) no remaining entry uses. */
  snapshots: number;
  deliveries: number;
  deliveryAttempts: number;
  parkedOutputs: number;
}

export const noneDeleted: DeletedCounts = {
  entries: 0,
  snapshots: 0,
  deliveries: 0,
  deliveryAttempts: 0,
  parkedOutputs: 0,
};

export function addCounts(a: DeletedCounts, b: DeletedCounts): DeletedCounts {
  return {
    entries: a.entries + b.entries,
    snapshots: a.snapshots + b.snapshots,
    deliveries: a.deliveries + b.deliveries,
    deliveryAttempts: a.deliveryAttempts + b.deliveryAttempts,
    parkedOutputs: a.parkedOutputs + b.parkedOutputs,
  };
}

/** An entry a batch takes: what its dependants are found by. */
export interface DoomedEntry {
  id: string;
  execution_id: string;
  started_at: number;
}

/**
 * The next `limit` entries `filter` selects, oldest first, along the index the list reads for the same
 * filters (filteredEntries), so a batch reads only its own rows however many are left.
 */
export function doomedEntriesSql(filter: LogFilter, limit: number, bind: Binder): string {
  const { from, where, key } = filteredEntries(filter, bind);
  return (
    `SELECT l.id, l.execution_id, l.started_at FROM ${from} WHERE ${where.join(" AND ")} ` +
    `ORDER BY ${key.startedAt} ASC, ${key.id} ASC LIMIT ${bind.value("limit", limit)}`
  );
}

/** How many entries `filter` selects: DeleteLogs' preview (D43). */
export function selectedCountSql(filter: LogFilter, bind: Binder): string {
  const { from, where } = filteredEntries(filter, bind);
  return `SELECT count(*) AS n FROM ${from} WHERE ${where.join(" AND ")}`;
}

/** The deleting part of a store's LogDeletionStore, which deleteInBatches drives. */
export interface BatchDeleter {
  deleteBatch(filter: LogFilter, limit: number): Promise<DeletedCounts>;
}

/**
 * Entries per write transaction. On SQLite a batch of 200 entries, each with a delivery and its
 * attempts, held the write lock 30-40 ms (median) on a two-core machine busy with other work.
 */
export const deletionBatchSize = 200;

export interface DeletionBounds {
  /** Stop once this many entries went, to answer within a request's time (D43). */
  maxEntries?: number;
  /** Stop between batches once it aborts (the caller left, or the activity was cancelled). */
  signal?: AbortSignal;
  /** Called after each batch with what it removed: a heartbeat, a metric. */
  onBatch?: (batch: DeletedCounts) => void;
  /**
   * After each batch, wait this share of the time the batch took: the pace of a deletion that runs in
   * the background (purgePause), which leaves the store and the cores to the API between its batches.
   * None (a request's deletion, D43) goes on at once.
   */
  pause?: number;
}

/**
 * D41's purge waits a third of the time each batch took before the next. On PostgreSQL on two cores (the
 * purge bench; goals: the REST list's p99 within 1.5x, a rate of 0.5x a bare DELETE), deleting without a
 * pause gave a p99 of 1.61x at 0.90x; a pause of half the batch's time 1.06x at 0.50x; a quarter 1.51x at
 * 0.66x (bench/README.md, purge). A third sits between the last two, with room on both goals.
 */
export const purgePause = 1 / 3;

/**
 * Deletes what `filter` selects, oldest first, one batch per transaction, yielding to the event loop
 * between batches so the process's other requests run and other processes may take the write lock.
 * Memory stays one batch's whatever the total. `done` says nothing selected is left.
 */
export async function deleteInBatches(
  deleter: BatchDeleter,
  filter: LogFilter,
  bounds: DeletionBounds = {},
): Promise<{ deleted: DeletedCounts; done: boolean }> {
  let deleted = noneDeleted;
  for (;;) {
    const room = (bounds.maxEntries ?? Number.POSITIVE_INFINITY) - deleted.entries;
    if (room <= 0 || bounds.signal?.aborted) return { deleted, done: false };
    const limit = Math.min(deletionBatchSize, room);
    const started = performance.now();
    const batch = await deleter.deleteBatch(filter, limit);
    deleted = addCounts(deleted, batch);
    bounds.onBatch?.(batch);
    if (batch.entries < limit) return { deleted, done: true };
    if (bounds.pause) await sleep((performance.now() - started) * bounds.pause);
    else await new Promise((resolve) => setImmediate(resolve));
  }
}
