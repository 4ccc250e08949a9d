import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import { inject } from "vitest";
import { loadMasterKey } from "../../src/security/secrets.js";
import { databaseFile } from "../../src/store/database.js";
import { namedStatement } from "../../src/store/postgres/named-parameters.js";
import { openPostgresStore } from "../../src/store/postgres/store.js";
import { openSqlite } from "../../src/store/sqlite-addon.js";
import { openStore, type Store } from "../../src/store/store.js";
import { createDatabaseWith } from "./postgres.js";

/** The store of a flowlog a test starts, and what a test needs to look at it from outside. */
export interface TestStore {
  store: Store;
  /** What another flowlog process (the CLI, a worker) needs in its environment to open this same store. */
  env: Record<string, string>;
  /** A second store on the same database, as another process on the machine, or another machine, opens it. */
  openAnother(): Promise<Store>;
  /** Runs a statement with `@name` parameters on the store's database, as an operator's SQL client would. */
  sql<R = Record<string, unknown>>(statement: string, parameters?: object): Promise<R[]>;
  /**
   * Whether `value` is anywhere in what the database holds at rest: in the SQLite file and its WAL, or in
   * any row of any table as PostgreSQL prints it, as text or as bytes (bytea prints as hex).
   */
  holds(value: string): Promise<boolean>;
}

/**
 * The store of a flowlog a test starts, of the kind its vitest project runs (D32): a SQLite file in
 * `dataDir`, or a new database on the project's PostgreSQL server, with the master key kept in `dataDir`
 * either way. The same test files run on both (vitest.config.ts), so one suite holds both to its promises.
 */
export async function openTestStore(dataDir: string): Promise<TestStore> {
  if (inject("storeKind") !== "postgres") return sqliteStore(dataDir);
  const admin = new pg.Client({ connectionString: inject("postgresAdminUrl") });
  await admin.connect();
  const url = new URL(inject("postgresAdminUrl"));
  url.pathname = `/flowlog_${randomBytes(6).toString("hex")}`;
  try {
    await createDatabaseWith(admin, url.href);
  } finally {
    await admin.end();
  }
  const masterKey = loadMasterKey({ dataDir, masterKey: undefined });
  const store = await openPostgresStore(url.href, masterKey);
  const query = async <R>(statement: string, parameters?: object) => {
    const client = new pg.Client({ connectionString: url.href });
    await client.connect();
    try {
      return (await client.query(namedStatement(statement)(parameters))).rows as R[];
    } finally {
      await client.end();
    }
  };
  return {
    store,
    env: {
      FLOWLOG_DATA_DIR: dataDir,
      FLOWLOG_DATABASE_URL: url.href,
      FLOWLOG_MASTER_KEY: masterKey.toString("base64"),
    },
    openAnother: () => openPostgresStore(url.href, masterKey),
    sql: query,
    async holds(value) {
      const tables = await query<{ name: string }>(
        "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
      );
      const rows = await Promise.all(
        tables.map(({ name }) => query<{ row: string }>(`SELECT t::text AS row FROM "${name}" t`)),
      );
      const text = rows
        .flat()
        .map((r) => r.row)
        .join("\n");
      return text.includes(value) || text.includes(Buffer.from(value, "utf8").toString("hex"));
    },
  };
}

function sqliteStore(dataDir: string): TestStore {
  const file = databaseFile(dataDir);
  return {
    store: openStore({ dataDir }),
    env: { FLOWLOG_DATA_DIR: dataDir },
    openAnother: async () => openStore({ dataDir }),
    async sql<R>(statement: string, parameters?: object) {
      const db = openSqlite(file);
      try {
        const prepared = db.prepare(statement);
        const bound = parameters === undefined ? [] : [parameters];
        if (!prepared.reader) {
          prepared.run(...bound);
          return [];
        }
        return prepared.all(...bound) as R[];
      } finally {
        db.close();
      }
    },
    async holds(value) {
      const bytes = Buffer.concat(
        [file, `${file}-wal`].map((name) => {
          try {
            return readFileSync(name);
          } catch {
            return Buffer.alloc(0);
          }
        }),
      );
      return bytes.includes(Buffer.from(value, "utf8"));
    },
  };
}
