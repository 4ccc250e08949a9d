import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Db } from "../src/store/database.js";
import { databaseFile, openDatabase } from "../src/store/database.js";
import type { LogFilter, Page, PageKey, PageRequest } from "../src/store/log-list-sql.js";
import { summaryColumns } from "../src/store/log-rows.js";
import { listQuery } from "../src/store/logs-store.js";
import { openStore, type Store } from "../src/store/store.js";
import { type Bench, type BenchOptions, ms, ratio, type Table } from "./support/report.js";
import { type Distribution, type SampleBudget, sampleAsync, samplePairAsync } from "./support/sample.js";
import { openBenchStore, seedLarge } from "./support/store.js";

const dayMs = 86_400_000;
export const page: PageRequest = {
  order: "desc",
  limit: 100,
  withCostDetail: false,
  withTraceSpans: false,
  withFinalOutput: false,
};

export interface Plan {
  sizes: number[];
  cursorSteps: number;
  budget: SampleBudget;
}

export const plans: Record<"quick" | "full", Plan> = {
  // Quick mode's largest store still has more pages than the cursor walk takes, so the walk ends at its
  // step count for some filters and at the last page for others, as at full size.
  quick: { sizes: [2_000, 5_000], cursorSteps: 20, budget: { count: 50, maxMs: 100 } },
  // 10M (issue 52): hours of seeding and 55 GB of disk on SQLite (bench/README.md); `--sizes=` picks sizes.
  full: {
    sizes: [10_000, 100_000, 1_000_000, 10_000_000],
    cursorSteps: 1_000,
    budget: { count: 1_000, maxMs: 5_000 },
  },
};

/** The mode's plan, its sizes replaced by `--sizes=` when given. */
export function planOf(options: BenchOptions): Plan {
  const plan = options.quick ? plans.quick : plans.full;
  return options.sizes ? { ...plan, sizes: options.sizes } : plan;
}

/** What a store of `size` entries cost to seed and holds on disk, for a table's title. */
export function seededTitle(what: string, size: number, seedMs: number, bytes: number): string {
  const rate = Math.round((size / seedMs) * 1000).toLocaleString("en-US");
  const perEntry = Math.round(bytes / size).toLocaleString("en-US");
  return `${what}: ${size.toLocaleString("en-US")} log entries (seeded at ${rate}/s; ${perEntry} B on disk each)`;
}

/**
 * GET /api/v1/logs measured in-process at the store (issue 7, item 1): a 100-row page under each common
 * filter, first and after many cursor steps, beside the same page read with SQL OFFSET on the same file.
 */
export const listQueryBench: Bench = {
  name: "list-query",
  async run(options: BenchOptions) {
    const plan = planOf(options);
    const tables: Table[] = [];
    for (const size of plan.sizes) tables.push(await measureStore(size, plan, options.keepStores));
    return tables;
  },
};

async function measureStore(size: number, plan: Plan, keepStores: string | undefined): Promise<Table> {
  const seeded = await seededStore(size, keepStores);
  const file = databaseFile(seeded.dataDir);
  const db = openDatabase(file);
  try {
    // The file alone, every page of the WAL copied back into it: what the entries take on disk.
    db.pragma("wal_checkpoint(TRUNCATE)");
    const title = seededTitle("list-query", size, seeded.seedMs, statSync(file).size);
    const target: ListTarget = {
      list: async (filter, page) => await seeded.store.logs.list(filter, page),
      offsetPage: (filter, offset) => offsetQuery(db, filter, offset),
      rowsById: (ids) => rowsById(db, ids),
    };
    const filters = commonFilters(filterValues(db, seeded.workspaceId), seeded.workspaceId, seeded.now);
    return listQueryTable(title, await measure(target, filters, plan));
  } finally {
    db.close();
    await seeded.dispose();
  }
}

/** How a store was seeded: `now` places the date filters; a kept store records it once its seeding ended. */
interface Seeding {
  workspaceId: string;
  now: number;
  seedMs: number;
}

/**
 * The store of `size` seeded entries to measure: the one kept under `keepStores` by an earlier run, or
 * one seeded now (and kept there when asked; a store whose seeding did not end is seeded again).
 */
async function seededStore(
  size: number,
  keepStores: string | undefined,
): Promise<Seeding & { store: Store; dataDir: string; dispose(): Promise<void> }> {
  const keptIn = keepStores ? path.join(keepStores, `list-query-${size}`) : undefined;
  const seedingFile = keptIn && path.join(keptIn, "seeding.json");
  if (keptIn && seedingFile && existsSync(seedingFile)) {
    const seeding = JSON.parse(readFileSync(seedingFile, "utf8")) as Seeding;
    process.stderr.write(`  measuring the store of ${size} log entries kept in ${keptIn}\n`);
    const store = openStore({ dataDir: keptIn });
    return { ...seeding, store, dataDir: keptIn, dispose: () => store.close() };
  }
  const bench = await openBenchStore(keptIn);
  const now = Date.now();
  const seeding = performance.now();
  await seedLarge(bench, size, now);
  const seedMs = performance.now() - seeding;
  process.stderr.write(`  seeded ${size} log entries in ${(seedMs / 1000).toFixed(1)} s\n`);
  const done: Seeding = { workspaceId: bench.workspaceId, now, seedMs };
  if (seedingFile) writeFileSync(seedingFile, `${JSON.stringify(done)}\n`);
  return { ...done, store: bench.store, dataDir: bench.dataDir, dispose: bench.dispose };
}

/** What the measurement needs of a store: its list, and its OFFSET baseline on the same data. */
export interface ListTarget {
  list(filter: LogFilter, page: PageRequest): Promise<Page>;
  /** The store's own first-page SQL for the filter (same columns and order), OFFSET in place of the keyset. */
  offsetPage(
    filter: LogFilter,
    offset: number,
  ): { run(): Promise<unknown>; firstId(): Promise<string | undefined> };
  /**
   * A page's rows read by id with the list's columns, on the second connection: the floor under a page,
   * without its walk of the filter's index. Deep against first here tells a deep page that costs more for
   * where its rows lie from one that costs more for its walk (issue 52).
   */
  rowsById?(ids: string[]): () => Promise<unknown>;
}

/** The values the filter sets take from the seeded data, so each one matches rows. */
export interface FilterValues {
  /** The workflow and model with the most executions. */
  workflowId: string;
  model: string;
  /** The first and third quartiles of the cost. */
  costRange: [number, number];
}

/** The filter sets the issue names. */
export function commonFilters(
  values: FilterValues,
  workspaceId: string,
  now: number,
): Record<string, LogFilter> {
  return {
    none: { workspaceId },
    "one workflow": { workspaceId, workflowIds: [values.workflowId] },
    "level=error": { workspaceId, level: "error" },
    "trigger+dates": {
      workspaceId,
      triggers: ["api"],
      startedFrom: now - 20 * dayMs,
      startedTo: now - 5 * dayMs,
    },
    "cost range": { workspaceId, minCost: values.costRange[0], maxCost: values.costRange[1] },
    model: { workspaceId, model: values.model },
  };
}

function filterValues(db: Db, workspaceId: string): FilterValues {
  const one = <T>(sql: string) => db.prepare(sql).get(workspaceId) as T;
  const { workflowId } = one<{ workflowId: string }>(
    "SELECT workflow_id AS workflowId FROM log_entries WHERE workspace_id = ? GROUP BY 1 ORDER BY count(*) DESC",
  );
  const { model } = one<{ model: string }>(
    "SELECT model FROM log_entry_models WHERE workspace_id = ? GROUP BY 1 ORDER BY count(*) DESC",
  );
  const costAt = (quantile: number) =>
    (
      db
        .prepare(
          "SELECT cost_total AS cost FROM log_entries WHERE workspace_id = ? ORDER BY cost_total " +
            "LIMIT 1 OFFSET (SELECT count(*) FROM log_entries WHERE workspace_id = ?) * ?",
        )
        .get(workspaceId, workspaceId, quantile) as { cost: number }
    ).cost;
  return { workflowId, model, costRange: [costAt(0.25), costAt(0.75)] };
}

/** One row per filter set: first and deep pages by keyset, and the deep page by OFFSET. */
export async function measure(
  target: ListTarget,
  filters: Record<string, LogFilter>,
  plan: Plan,
): Promise<(string | number)[][]> {
  const rows: (string | number)[][] = [];
  for (const [name, filter] of Object.entries(filters)) {
    const { steps, after } = await walk(target, filter, plan.cursorSteps);
    const deepPage = { ...page, after };
    const [first, deep] = await samplePairAsync(
      () => target.list(filter, page),
      () => target.list(filter, deepPage),
      plan.budget,
    );
    const offset = target.offsetPage(filter, steps * page.limit);
    const idsOf = async (request: PageRequest) =>
      (await target.list(filter, request)).entries.map((entry) => entry.id);
    const deepIds = await idsOf(deepPage);
    checkSamePage(deepIds[0], await offset.firstId(), name);
    const offsetDeep = await sampleAsync(offset.run, plan.budget);
    const floor = target.rowsById
      ? await floorRatio(target.rowsById, await idsOf(page), deepIds, plan.budget)
      : "-";
    rows.push([
      name,
      ...cells(first),
      steps,
      ...cells(deep),
      ratio(deep.p50 / first.p50),
      floor,
      ms(offsetDeep.p50),
      ratio(deep.p50 / offsetDeep.p50),
    ]);
  }
  return rows;
}

export function listQueryTable(title: string, rows: (string | number)[][]): Table {
  return {
    title: `${title}, 100-row pages (ms)`,
    columns: [
      "filter",
      "first p50",
      "first p99",
      "first max",
      "steps",
      "deep p50",
      "deep p99",
      "deep max",
      "deep/first p50",
      "by id deep/first p50",
      "OFFSET deep p50",
      "keyset/OFFSET deep p50",
    ],
    rows,
    note: "steps: cursor steps taken to reach the deep page (fewer when the filter has fewer pages). by id (SQLite): the same two pages' rows read by id, the floor without the index walk. Ratios compare p50s, the stable figure.",
  };
}

const cells = (d: Distribution) => [ms(d.p50), ms(d.p99), ms(d.max)];

/** The deep page's rows read by id against the first page's, p50 over p50. */
async function floorRatio(
  rowsById: NonNullable<ListTarget["rowsById"]>,
  firstIds: string[],
  deepIds: string[],
  budget: SampleBudget,
): Promise<string> {
  const [first, deep] = await samplePairAsync(rowsById(firstIds), rowsById(deepIds), budget);
  return ratio(deep.p50 / first.p50);
}

/** Follows `next` up to `steps` times; the key reached starts the deep page. */
async function walk(
  target: ListTarget,
  filter: LogFilter,
  steps: number,
): Promise<{ steps: number; after?: PageKey }> {
  let after: PageKey | undefined;
  let taken = 0;
  while (taken < steps) {
    const { next } = await target.list(filter, after ? { ...page, after } : page);
    if (!next) break;
    after = next;
    taken++;
  }
  return after ? { steps: taken, after } : { steps: taken };
}

/**
 * The baseline: the store's own list SQL for the first page (same columns, filters and order), with
 * OFFSET in place of the keyset condition, prepared here on a second connection to the same file.
 */
function offsetQuery(db: Db, filter: LogFilter, offset: number) {
  const { sql, params } = listQuery(filter, page);
  const statement = db.prepare(`${sql} OFFSET @offset`);
  const bound = { ...params, offset };
  return {
    run: async () => statement.all(bound),
    firstId: async () => (statement.get(bound) as { id: string } | undefined)?.id,
  };
}

/** The SQLite store's rows of `ids` with the list's columns, in its order, by primary key. */
function rowsById(db: Db, ids: string[]) {
  const statement = db.prepare(
    `SELECT ${summaryColumns} FROM log_entries l WHERE l.id IN (SELECT value FROM json_each(?)) ` +
      "ORDER BY l.started_at DESC, l.id DESC",
  );
  const list = JSON.stringify(ids);
  return async () => statement.all(list);
}

function checkSamePage(keysetId: string | undefined, offsetId: string | undefined, filter: string): void {
  if (keysetId !== offsetId) {
    throw new Error(`${filter}: the keyset page starts at ${keysetId}, the OFFSET page at ${offsetId}`);
  }
}
