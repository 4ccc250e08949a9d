import { type Binder, filteredEntries, type LogFilter } from "./log-list-sql.js";
import { costDetailColumns, type ListedRow, listedEntryFromRow, summaryColumns } from "./log-rows.js";
import type { ListedEntryRecord } from "./records.js";

/**
 * D44's tail in the store: entries in the order they were written, whatever their startedAt, read between
 * two positions of that order with the list's filters (filteredEntries), written once for both stores.
 */

/**
 * Where an entry stands in write order. SQLite numbers its entries in commit order (`seq`, its `xid`
 * always 0); PostgreSQL orders them by the writing transaction's id, then by `seq` (migrations.ts).
 */
export interface TailPosition {
  /** A PostgreSQL xid8 in decimal; "0" on SQLite. */
  xid: string;
  seq: number;
}

/**
 * How far every entry is settled: nothing can be written later at or before it. On SQLite, the last
 * number handed out; on PostgreSQL, (xmin of a snapshot, 0), since every transaction older than its xmin
 * has ended.
 */
export type TailHorizon = TailPosition;

/** What one read of a tail asks for: the entries after `after` up to `upTo`, at most `limit`. */
export interface TailRequest {
  after: TailPosition;
  upTo: TailHorizon;
  limit: number;
  withCostDetail: boolean;
  withTraceSpans: boolean;
  withFinalOutput: boolean;
}

export interface TailEntry {
  entry: ListedEntryRecord;
  position: TailPosition;
}

/** The entries written since a position, across all workspaces: which tails have something to read. */
export interface WritesSince {
  /** The new horizon: every entry at or before it is settled. */
  horizon: TailHorizon;
  /** The workspaces with entries after the position asked about, up to `horizon`. */
  workspaceIds: string[];
}

/** How one store's SQL compares rows to positions in write order (`l` is log_entries). */
export interface WriteOrder {
  /** The row's position, selected as `tail_xid` and `tail_seq`. */
  columns: string;
  /** The condition that the row comes after `position`. */
  after(position: TailPosition, bind: Binder): string;
  /** The condition that the row is at or before `horizon`. */
  upTo(horizon: TailHorizon, bind: Binder): string;
  /** ORDER BY's terms. */
  orderBy: string;
}

export const sqliteWriteOrder: WriteOrder = {
  columns: "l.xid AS tail_xid, l.seq AS tail_seq",
  // xid is always 0 on SQLite; the equality lets the write-order indexes, led by it, serve.
  after: (position, bind) => `l.xid = 0 AND l.seq > ${bind.value("afterSeq", position.seq)}`,
  upTo: (horizon, bind) => `l.seq <= ${bind.value("upToSeq", horizon.seq)}`,
  orderBy: "l.seq",
};

export const postgresWriteOrder: WriteOrder = {
  columns: "l.xid::text AS tail_xid, l.seq AS tail_seq",
  after: (position, bind) =>
    `(l.xid, l.seq) > (${bind.value("afterXid", position.xid)}::xid8, ${bind.value("afterSeq", position.seq)}::bigint)`,
  upTo: (horizon, bind) =>
    `(l.xid, l.seq) <= (${bind.value("upToXid", horizon.xid)}::xid8, ${bind.value("upToSeq", horizon.seq)}::bigint)`,
  orderBy: "l.xid, l.seq",
};

/** The tail's read: the filtered entries between two positions, in write order. */
export function tailSql(filter: LogFilter, request: TailRequest, bind: Binder, order: WriteOrder): string {
  const { from, where } = filteredEntries(filter, bind);
  where.push(order.after(request.after, bind), order.upTo(request.upTo, bind));
  const detail = [
    request.withCostDetail ? costDetailColumns : undefined,
    request.withTraceSpans ? "l.trace_spans_json, l.trace_spans_canonical" : undefined,
    request.withFinalOutput ? "l.final_output_json" : undefined,
  ].filter(Boolean);
  return (
    `SELECT ${[summaryColumns, ...detail, order.columns].join(", ")} FROM ${from} ` +
    `WHERE ${where.join(" AND ")} ORDER BY ${order.orderBy} LIMIT ${bind.value("limit", request.limit)}`
  );
}

/** Which workspaces have entries after `after`, up to `upTo`, across all of them. */
export function writtenWorkspacesSql(
  after: TailPosition,
  upTo: TailHorizon,
  bind: Binder,
  order: WriteOrder,
): string {
  return `SELECT DISTINCT l.workspace_id FROM log_entries l WHERE ${order.after(after, bind)} AND ${order.upTo(upTo, bind)}`;
}

export type TailRow = ListedRow & { tail_xid: string; tail_seq: number | string };

export function tailEntryFromRow(row: TailRow): TailEntry {
  return {
    entry: listedEntryFromRow(row),
    position: { xid: String(row.tail_xid), seq: Number(row.tail_seq) },
  };
}

/** Positions compared in write order. */
export function comparePositions(a: TailPosition, b: TailPosition): number {
  const ax = BigInt(a.xid);
  const bx = BigInt(b.xid);
  if (ax !== bx) return ax < bx ? -1 : 1;
  return a.seq - b.seq;
}
