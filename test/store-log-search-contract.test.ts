import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Db, openDatabase } from "../src/store/database.js";
import { deleteInBatches } from "../src/store/log-deletion.js";
import { LogDeletionStore } from "../src/store/log-deletion-store.js";
import { type LogFilter, type PageRequest, pageOf } from "../src/store/log-list-sql.js";
import type { LogRow } from "../src/store/log-rows.js";
import { LogsStore, listQuery } from "../src/store/logs-store.js";
import { openPostgres, type PostgresPool } from "../src/store/postgres/database.js";
import { PostgresLogDeletionStore } from "../src/store/postgres/log-deletion-store.js";
import {
  PostgresLogsStore,
  listQuery as postgresListQuery,
  searchPlans as postgresSearchPlans,
} from "../src/store/postgres/logs-store.js";
import { migrations as postgresMigrations } from "../src/store/postgres/migrations.js";
import { searchTermsOf } from "../src/store/search-words.js";
import { searchPlans } from "../src/store/sqlite-query.js";
import type { StoreArea } from "../src/store/store.js";
import { execution } from "./support/flowlog.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import {
  type ContractDatabase,
  type OlderDatabase,
  olderStoreKinds,
  storeKinds,
} from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

interface Areas {
  logs: Pick<StoreArea<LogsStore>, "insertExecutions" | "list">;
  deletion: StoreArea<LogDeletionStore>;
}

const account = { userId: "usr_q", workspaceId: "ws_q", key: "", keyId: "" };
const page: PageRequest = {
  order: "desc",
  limit: 100,
  withCostDetail: false,
  withTraceSpans: false,
  withFinalOutput: false,
};

function searched(q: string): LogFilter {
  return { workspaceId: account.workspaceId, search: searchTermsOf(q) };
}

async function found(logs: Areas["logs"], q: string): Promise<string[]> {
  return (await logs.list(searched(q), page)).entries.map((entry) => entry.id).sort();
}

async function indexRows(db: ContractDatabase<Areas>): Promise<number> {
  return Number((await db.query<{ n: number }>("SELECT count(*) AS n FROM log_search"))[0]?.n);
}

/** 2,100 entries, half of them errors, all holding "common" and every seventh "rare". */
function pagedRecords() {
  return Array.from({ length: 2_100 }, (_, i) =>
    execution(account, "wf_q", {
      // Many entries on one millisecond, so pages end inside runs of equal startedAt.
      startedAt: 1_000 + Math.floor(i / 3),
      level: i % 2 === 0 ? "info" : "error",
      finalOutput: i % 7 === 0 ? "common rare" : "common",
    }),
  );
}

const pagedQueries = [
  ["common", () => true],
  ["rare", (i: number) => i % 7 === 0],
  ["common rar*", (i: number) => i % 7 === 0],
] as const;

/** The ids of the errors among pagedRecords' kept ones, in keyset order. */
function pagedExpected(
  records: ReturnType<typeof pagedRecords>,
  kept: (i: number) => boolean,
  order: "asc" | "desc",
): string[] {
  const expected = records
    .filter((_, i) => kept(i))
    .map((r) => r.entry)
    .filter((entry) => entry.level === "error")
    .sort((a, b) => a.startedAt - b.startedAt || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)))
    .map((entry) => entry.id);
  if (order === "desc") expected.reverse();
  return expected;
}

const kinds = storeKinds<Areas>(
  {
    sqlite: (db) => ({ logs: new LogsStore(db), deletion: new LogDeletionStore(db) }),
    postgres: (pool) => ({ logs: new PostgresLogsStore(pool), deletion: new PostgresLogDeletionStore(pool) }),
  },
  () => server,
);

describe.each(kinds)("the search index (D45) on %s", (_, open) => {
  let db: ContractDatabase<Areas>;
  beforeEach(async () => {
    db = await open();
    await db.query("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_q', 'Q', 0)");
    await db.query(
      "INSERT INTO workflows (id, workspace_id, name, created_at, updated_at) VALUES ('wf_q', 'ws_q', 'Nightly Invoices', 0, 0)",
    );
  });
  afterEach(() => db.close());

  it("indexes an entry with its workflow's name as it is written, and drops its words with it", async () => {
    const records = ["gateway timeout", "quota exceeded", "all fine"].map((error, i) =>
      execution(account, "wf_q", { startedAt: 1_000 + i, finalOutput: { error } }),
    );
    await db.areas.logs.insertExecutions(records);
    const ids = records.map((r) => r.entry.id);
    expect(await found(db.areas.logs, "nightly invoice*")).toEqual([...ids].sort());
    expect(await found(db.areas.logs, "timeout")).toEqual([ids[0]]);
    expect(await indexRows(db)).toBe(3);

    // DeleteLogs' selection and the purge's (by date) both go through the batches: no word stays behind.
    await deleteInBatches(db.areas.deletion, searched("quota"));
    expect(await found(db.areas.logs, "quota")).toEqual([]);
    await deleteInBatches(db.areas.deletion, { workspaceId: account.workspaceId, startedTo: 1_000 });
    expect(await indexRows(db)).toBe(1);
    expect(await found(db.areas.logs, "nightly")).toEqual([ids[2]]);
  });

  it("pages a word many entries hold and one few hold in keyset order, as the list without q would", async () => {
    // Over 2,000 matches and under: SQLite reads the two along different plans (logs-store.ts).
    const records = pagedRecords();
    await db.areas.logs.insertExecutions(records);
    for (const [q, kept] of pagedQueries) {
      for (const order of ["asc", "desc"] as const) {
        const expected = pagedExpected(records, kept, order);
        const ids: string[] = [];
        let after: PageRequest["after"];
        do {
          const listed = await db.areas.logs.list(
            { ...searched(q), level: "error" },
            { ...page, order, limit: 97, after },
          );
          ids.push(...listed.entries.map((entry) => entry.id));
          after = listed.next;
        } while (after);
        expect(ids, `${q} ${order}`).toEqual(expected);
      }
    }
  });

  it("takes the words of its query syntax (NEAR, AND, OR, NOT) as words", async () => {
    const record = execution(account, "wf_q", { finalOutput: "not near and or" });
    await db.areas.logs.insertExecutions([record, execution(account, "wf_q", { finalOutput: "other" })]);
    expect(await found(db.areas.logs, "NEAR(and OR not)")).toEqual([record.entry.id]);
  });
});

describe("SQLite's search plans (D45)", () => {
  let dir: string;
  let db: Db;
  let logs: LogsStore;
  let records: ReturnType<typeof pagedRecords>;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "flowlog-search-plans-"));
    db = openDatabase(path.join(dir, "flowlog.sqlite"));
    db.exec(`INSERT INTO workspaces (id, name, created_at) VALUES ('ws_q', 'Q', 0);
      INSERT INTO workflows (id, workspace_id, name, created_at, updated_at) VALUES ('wf_q', 'ws_q', 'Nightly', 0, 0)`);
    logs = new LogsStore(db);
    records = pagedRecords();
    await logs.insertExecutions(records);
  });
  afterAll(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(searchPlans)("%s pages exactly the entries that hold the words, in keyset order", async (plan) => {
    for (const [q, kept] of pagedQueries) {
      for (const order of ["asc", "desc"] as const) {
        const ids: string[] = [];
        let after: PageRequest["after"];
        do {
          const { sql, params } = listQuery(
            { ...searched(q), level: "error" },
            { ...page, order, limit: 97, after },
            plan,
          );
          const rows = db.prepare(sql).all(params) as { id: string; started_at: number }[];
          ids.push(...rows.slice(0, 97).map((row) => row.id));
          const last = rows[96];
          after = rows.length > 97 && last ? { startedAt: last.started_at, id: last.id } : undefined;
        } while (after);
        expect(ids, `${q} ${order}`).toEqual(pagedExpected(records, kept, order));
      }
    }
  });

  it("chooses by how many entries hold the words and how many a page needs", async () => {
    const planOf = async (filter: LogFilter, limit: number) =>
      (await logs.explainList(filter, { ...page, limit })).join("\n");
    // 300 of 2,100: the matches drive, read by rowid, unless a model's rows drive.
    expect(await planOf(searched("rare"), 97)).toMatch(/^SEARCH l USING INTEGER PRIMARY KEY/);
    // ...then the keyset index is checked against the matches' rowids, without reading a row.
    expect(await planOf({ ...searched("rare"), model: "gpt-4o" }, 97)).toMatch(
      /SEARCH e USING COVERING INDEX log_entries_in_write_order/,
    );
    // Every entry: a set of FTS5's rowids, each candidate's row read for its seq.
    const common = await planOf(searched("common"), 97);
    expect(common).toMatch(/^SEARCH l USING INDEX log_entries_by_time .*\nLIST SUBQUERY/s);
    expect(common).not.toMatch(/SEARCH e |EXISTS/);
    // A page of one: FTS5 is asked for each candidate, and no set of matches is built.
    const one = await planOf(searched("common"), 1);
    expect(one).toMatch(/^SEARCH l USING INDEX log_entries_by_time .*\n.*EXISTS VIRTUAL TABLE/s);
    expect(one).not.toMatch(/LIST SUBQUERY/);
  });
});

describe("PostgreSQL's search plans (D45)", () => {
  let pool: PostgresPool;
  let records: ReturnType<typeof pagedRecords>;
  beforeAll(async () => {
    pool = await openPostgres(await server.createDatabase());
    await pool.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('ws_q', 'Q', 0);
      INSERT INTO workflows (id, workspace_id, name, created_at, updated_at) VALUES ('wf_q', 'ws_q', 'Nightly', 0, 0)`);
    records = pagedRecords();
    await new PostgresLogsStore(pool).insertExecutions(records);
  });
  afterAll(() => pool.end());

  it.each(postgresSearchPlans)(
    "%s pages exactly the entries that hold the words, in keyset order",
    async (plan) => {
      for (const [q, kept] of pagedQueries) {
        for (const order of ["asc", "desc"] as const) {
          const ids: string[] = [];
          let after: PageRequest["after"];
          do {
            const request = { ...page, order, limit: 97, after };
            const { rows } = await pool.query<LogRow>(
              postgresListQuery({ ...searched(q), level: "error" }, request, plan),
            );
            const listed = pageOf(rows, 97);
            ids.push(...listed.entries.map((entry) => entry.id));
            after = listed.next;
          } while (after);
          expect(ids, `${q} ${order}`).toEqual(pagedExpected(records, kept, order));
        }
      }
    },
  );
});

/** The schema version just before the migration that made the search index (a later one may follow it). */
const beforeSearch = (list: readonly unknown[]) => {
  const search = list.findIndex(
    (migration) =>
      String(migration).includes("CREATE TABLE log_search") ||
      String(migration).includes("CREATE VIRTUAL TABLE log_search"),
  );
  expect(search).toBeGreaterThan(0);
  return search;
};

/** A database at the schema just before D45's, then opened by this flowlog. */
const olderKinds = olderStoreKinds<Areas["logs"]>(
  beforeSearch,
  { sqlite: (db) => new LogsStore(db), postgres: (pool) => new PostgresLogsStore(pool) },
  () => server,
);

describe.each(olderKinds)("entries an older flowlog left, on %s (D45)", (_, open) => {
  let database: OlderDatabase<Areas["logs"]>;
  beforeEach(async () => {
    database = await open();
  });
  afterEach(() => database.close());

  it("are found once the migration has indexed them", async () => {
    await database.older(`
      INSERT INTO workspaces (id, name, created_at) VALUES ('ws_q', 'Q', 0);
      INSERT INTO workflows (id, workspace_id, name, created_at, updated_at) VALUES ('wf_q', 'ws_q', 'Weekly Payroll', 0, 0);
      INSERT INTO log_entries (id, workspace_id, workflow_id, execution_id, level, trigger, started_at, ended_at,
        total_duration_ms, cost_total, cost_json, trace_spans_json, final_output_json)
      VALUES
        ('log_old1', 'ws_q', 'wf_q', 'ex_old1', 'error', 'api', 1, 2, 1, 0, '{}',
          '[{"name":"Fetch Ledger","error":"Connection reset by peer","children":[{"name":"Inner Step"}]}]',
          '{"error":"upstream failed"}'),
        ('log_old2', 'ws_q', 'wf_gone', 'ex_old2', 'info', 'api', 3, 4, 1, 0, '{}', '[]', '["Ledger balanced"]'),
        ('log_old3', 'ws_q', 'wf_q', 'ex_old3', 'info', 'api', 5, 6, 1, 0, '{}', '[]', NULL);
    `);
    const logs = await database.upgrade();
    expect(await found(logs, "payroll")).toEqual(["log_old1", "log_old3"]);
    expect(await found(logs, "ledger")).toEqual(["log_old1", "log_old2"]);
    expect(await found(logs, "inner reset upstream")).toEqual(["log_old1"]);
    expect(await found(logs, "balanc*")).toEqual(["log_old2"]);
    // With the list's other filters, which PostgreSQL also asks of its index (searchableFilter).
    const foundWith = async (filter: Partial<LogFilter>) =>
      (await logs.list({ ...searched("ledger"), ...filter }, page)).entries.map((entry) => entry.id);
    expect(await foundWith({ level: "error" })).toEqual(["log_old1"]);
    expect(await foundWith({ level: "info", triggers: ["api"] })).toEqual(["log_old2"]);
    expect(await foundWith({ triggers: ["webhook"] })).toEqual([]);
  });
});

describe("PostgreSQL's entries indexed before their level and trigger were (D45)", () => {
  it("are found with those filters once the migration has added them", async () => {
    const url = await server.createDatabase();
    const facets = postgresMigrations.findIndex((migration) => String(migration).includes("facetLexemes"));
    expect(facets).toBeGreaterThan(0);
    const older = await openPostgres(url, { schemaVersion: facets });
    await older.query(`
      INSERT INTO workspaces (id, name, created_at) VALUES ('ws_q', 'Q', 0);
      INSERT INTO log_entries (id, workspace_id, workflow_id, execution_id, level, trigger, started_at, ended_at,
        total_duration_ms, cost_total, cost_json, trace_spans_json, final_output_json)
      VALUES ('log_a', 'ws_q', 'wf_q', 'ex_a', 'error', 'webhook', 1, 2, 1, 0, '{}', '[]', '"refund rejected"'),
        ('log_b', 'ws_q', 'wf_q', 'ex_b', 'info', 'api', 3, 4, 1, 0, '{}', '[]', '"refund rejected"');
      INSERT INTO log_search (log_id, words)
        VALUES ('log_a', array_to_tsvector('{refund,rejected}')), ('log_b', array_to_tsvector('{refund,rejected}'));
    `);
    await older.end();
    const pool = await openPostgres(url);
    try {
      const logs = new PostgresLogsStore(pool);
      const ids = async (filter: Partial<LogFilter>) =>
        (await logs.list({ ...searched("reject*"), ...filter }, page)).entries.map((entry) => entry.id);
      expect(await ids({})).toEqual(["log_b", "log_a"]);
      expect(await ids({ level: "error" })).toEqual(["log_a"]);
      expect(await ids({ triggers: ["api"] })).toEqual(["log_b"]);
      expect(await ids({ level: "error", triggers: ["api"] })).toEqual([]);
      // A prefix of the lexemes' own spelling is not a word: it matches none of them.
      expect((await logs.list(searched("level*"), page)).entries).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});
