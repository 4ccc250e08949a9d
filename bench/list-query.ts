import { seedWorkspace } from "../src/seed/seed.js";
import type { Db } from "../src/store/database.js";
import { databaseFile, openDatabase } from "../src/store/database.js";
import { type LogFilter, listQuery, type PageKey, type PageRequest } from "../src/store/logs-store.js";
import type { Store } from "../src/store/store.js";
import { type Bench, type BenchOptions, ms, ratio, type Table } from "./support/report.js";
import { type Distribution, type SampleBudget, sample } from "./support/sample.js";
import { openBenchStore } from "./support/store.js";

const dayMs = 86_400_000;
const page: PageRequest = { order: "desc", limit: 100, withTraceSpans: false, withFinalOutput: false };

interface Plan {
  sizes: number[];
  cursorSteps: number;
  budget: SampleBudget;
}

const plans: Record<"quick" | "full", Plan> = {
  quick: { sizes: [10_000, 50_000], cursorSteps: 100, budget: { count: 200, maxMs: 300 } },
  full: { sizes: [10_000, 100_000, 1_000_000], cursorSteps: 1_000, budget: { count: 1_000, maxMs: 5_000 } },
};

/**
 * GET /api/v1/logs measured in-process at the store (issue 7, item 1): a 100-row page under each common
 * filter, first and after many cursor steps, beside the same page read with SQL OFFSET on the same file.
 */
export const listQueryBench: Bench = {
  name: "list-query",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const tables: Table[] = [];
    for (const size of plan.sizes) tables.push(await measureStore(size, plan));
    return tables;
  },
};

async function measureStore(size: number, plan: Plan): Promise<Table> {
  const bench = openBenchStore();
  const now = Date.now();
  const seeding = performance.now();
  await seedWorkspace(bench.store, { workspaceId: bench.workspaceId, executions: size, seed: "bench", now });
  process.stderr.write(
    `  seeded ${size} log entries in ${((performance.now() - seeding) / 1000).toFixed(1)} s\n`,
  );
  const db = openDatabase(databaseFile(bench.dataDir));
  try {
    const rows = Object.entries(commonFilters(db, bench.workspaceId, now)).map(([name, filter]) =>
      measureFilter(name, filter, { store: bench.store, db, plan }),
    );
    return {
      title: `list-query: ${size.toLocaleString("en-US")} log entries, 100-row pages (ms)`,
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
        "OFFSET deep p50",
        "keyset/OFFSET deep p50",
      ],
      rows,
      note: "steps: cursor steps taken to reach the deep page (fewer when the filter has fewer pages). Ratios compare p50s, the stable figure.",
    };
  } finally {
    db.close();
    bench.dispose();
  }
}

/** The filter sets the issue names, with values read from the seeded data so each one matches rows. */
function commonFilters(db: Db, workspaceId: string, now: number): Record<string, LogFilter> {
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
  return {
    none: { workspaceId },
    "one workflow": { workspaceId, workflowIds: [workflowId] },
    "level=error": { workspaceId, level: "error" },
    "trigger+dates": {
      workspaceId,
      triggers: ["api"],
      startedFrom: now - 20 * dayMs,
      startedTo: now - 5 * dayMs,
    },
    "cost range": { workspaceId, minCost: costAt(0.25), maxCost: costAt(0.75) },
    model: { workspaceId, model },
  };
}

function measureFilter(
  name: string,
  filter: LogFilter,
  context: { store: Store; db: Db; plan: Plan },
): (string | number)[] {
  const { store, db, plan } = context;
  const first = sample(() => store.logs.list(filter, page), plan.budget);
  const { steps, after } = walk(store, filter, plan.cursorSteps);
  const deepPage = { ...page, after };
  const deep = sample(() => store.logs.list(filter, deepPage), plan.budget);
  const offset = offsetQuery(db, filter, steps * page.limit);
  checkSamePage(store.logs.list(filter, deepPage).entries[0]?.id, offset.firstId(), name);
  const offsetDeep = sample(offset.run, plan.budget);
  return [
    name,
    ...cells(first),
    steps,
    ...cells(deep),
    ratio(deep.p50 / first.p50),
    ms(offsetDeep.p50),
    ratio(deep.p50 / offsetDeep.p50),
  ];
}

const cells = (d: Distribution) => [ms(d.p50), ms(d.p99), ms(d.max)];

/** Follows `next` up to `steps` times; the key reached starts the deep page. */
function walk(store: Store, filter: LogFilter, steps: number): { steps: number; after?: PageKey } {
  let after: PageKey | undefined;
  let taken = 0;
  while (taken < steps) {
    const { next } = store.logs.list(filter, after ? { ...page, after } : page);
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
    run: () => statement.all(bound),
    firstId: () => (statement.get(bound) as { id: string } | undefined)?.id,
  };
}

function checkSamePage(keysetId: string | undefined, offsetId: string | undefined, filter: string): void {
  if (keysetId !== offsetId) {
    throw new Error(`${filter}: the keyset page starts at ${keysetId}, the OFFSET page at ${offsetId}`);
  }
}
