/** One table of a bench: a title, column names, and rows of already formatted cells. */
export interface Table {
  title: string;
  columns: string[];
  rows: (string | number)[][];
  /** What the reader needs to read the figures right. */
  note?: string;
  /**
   * Goals that a loaded machine does not move (bytes, not times), so a quick run on a busy machine can
   * hold them as well as a full one: `npm run bench` fails when one is missed, after printing every table.
   */
  gates?: Gate[];
}

/** One such goal, as the run reads it. */
export interface Gate {
  /** What is promised, with its bound, as the table's reader would say it. */
  goal: string;
  /** What this run measured. */
  figure: string;
  met: boolean;
}

export interface BenchOptions {
  /** Smaller stores, shorter loads, fewer rounds: the whole run within four minutes on two cores (issue 50). */
  quick: boolean;
  /** `--sizes=10000000,…`: the store sizes a bench that seeds several measures, in place of its mode's. */
  sizes?: number[];
  /** `--stores=postgres`: the stores a bench with a row per store measures (purge), in place of both. */
  stores?: BenchStoreKind[];
  /**
   * `--keep-stores=DIR`: list-query keeps each size's seeded SQLite store under DIR and measures it again
   * on the next run instead of seeding it (a 10M store takes two hours and 56 GB).
   */
  keepStores?: string;
}

export const benchStoreKinds = ["sqlite", "postgres"] as const;
export type BenchStoreKind = (typeof benchStoreKinds)[number];

export interface Bench {
  name: string;
  run(options: BenchOptions): Promise<Table[]>;
}

export function formatTable(table: Table): string {
  const cells = [table.columns, ...table.rows.map((row) => row.map(String))];
  const widths = table.columns.map((_, c) => Math.max(...cells.map((row) => (row[c] ?? "").length)));
  const line = (row: string[]) => row.map((cell, c) => cell.padStart(widths[c] ?? 0)).join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  const [head, ...body] = cells;
  const text = [table.title, line(head ?? []), rule, ...body.map(line)];
  if (table.note) text.push(table.note);
  return text.join("\n");
}

/** Milliseconds with three significant figures, so tables stay narrow and comparable. */
export function ms(value: number): string {
  // No sample at all (nothing finished within a short --quick window) reads as a dash, not NaN.
  if (!Number.isFinite(value)) return "-";
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toPrecision(3);
}

export function ratio(value: number): string {
  // A ratio to a rate nothing reached (a short --quick window on a busy machine) reads as a dash too.
  if (!Number.isFinite(value)) return "-";
  return `${value.toFixed(2)}x`;
}

export function perSecond(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}
