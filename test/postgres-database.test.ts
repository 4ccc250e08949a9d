import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../src/errors/store-unavailable.js";
import { openDatabase } from "../src/store/database.js";
import {
  DatabaseUrlError,
  isUnavailable,
  openPostgres,
  type PostgresPool,
} from "../src/store/postgres/database.js";
import { migrations } from "../src/store/postgres/migrations.js";
import { freePort } from "../src/util/free-port.js";
import { type PostgresServer, startPostgres } from "./support/postgres.js";

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres();
});
afterAll(() => server.stop());

async function withPool<T>(url: string, use: (pool: PostgresPool) => Promise<T>): Promise<T> {
  const pool = await openPostgres(url);
  try {
    return await use(pool);
  } finally {
    await pool.end();
  }
}

describe("FLOWLOG_DATABASE_URL stops a bad start with one line, credentials masked (issue 15)", () => {
  const startError = async (url: string) => {
    const error = await openPostgres(url).then(
      (pool) => pool.end().then(() => undefined),
      (error: unknown) => error,
    );
    expect(error).toBeInstanceOf(DatabaseUrlError);
    const message = (error as Error).message;
    expect(message).toMatch(/^FLOWLOG_DATABASE_URL=/);
    expect(message).not.toContain("\n");
    expect(message).not.toContain("s3cret");
    return message;
  };

  it("a URL of another scheme", async () => {
    expect(await startError("mysql://flowlog:s3cret@db.example:3306/flowlog")).toBe(
      "FLOWLOG_DATABASE_URL=mysql://flowlog:***@db.example:3306/flowlog: must be a postgres:// URL",
    );
  });

  it("something that is not a URL at all", async () => {
    expect(await startError("flowlog:s3cret@db.example/flowlog")).toBe(
      "FLOWLOG_DATABASE_URL=flowlog:***@db.example/flowlog: must be a postgres:// URL",
    );
  });

  it("a URL without a database", async () => {
    expect(await startError("postgres://flowlog:s3cret@db.example:5432")).toMatch(/names no database$/);
  });

  it("a server that is not there", async () => {
    const port = await freePort();
    expect(await startError(`postgres://flowlog:s3cret@127.0.0.1:${port}/flowlog`)).toBe(
      `FLOWLOG_DATABASE_URL=postgres://flowlog:***@127.0.0.1:${port}/flowlog: cannot connect: ` +
        `connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it("a name with several addresses, none of them listening", async () => {
    const port = await freePort();
    expect(await startError(`postgres://flowlog:s3cret@localhost:${port}/flowlog`)).toMatch(
      /cannot connect: connect ECONNREFUSED/,
    );
  });

  it("a database the server does not have, with the password given as a parameter", async () => {
    const url = new URL(await server.createDatabase());
    url.pathname = "/absent";
    url.searchParams.set("password", "s3cret");
    expect(await startError(url.href)).toBe(
      `FLOWLOG_DATABASE_URL=${url.href.replace("s3cret", "***")}: cannot connect: database "absent" does not exist`,
    );
  });
});

describe("migrations are versioned and applied once (D23, D32)", () => {
  const versions = async (pool: PostgresPool) =>
    (await pool.query("SELECT version, applied_at FROM schema_migrations ORDER BY version")).rows;

  it("three processes starting at once on a new database migrate it once, under the advisory lock", async () => {
    const url = await server.createDatabase();
    const starts = await Promise.allSettled([1, 2, 3].map(() => openPostgres(url)));
    await Promise.all(starts.flatMap((start) => (start.status === "fulfilled" ? [start.value.end()] : [])));
    expect(starts.map((start) => start.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    const applied = await withPool(url, versions);
    expect(applied.map((row) => row.version)).toEqual(migrations.map((_, index) => index + 1));
  });

  it("a later start finds nothing to apply", async () => {
    const url = await server.createDatabase();
    const before = await withPool(url, versions);
    expect(await withPool(url, versions)).toEqual(before);
  });

  it("a database a newer flowlog migrated is refused, not changed", async () => {
    const url = await server.createDatabase();
    const newer = migrations.length + 1;
    await withPool(url, (pool) =>
      pool.query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)", [newer]),
    );
    await expect(openPostgres(url)).rejects.toThrow(
      `the database is at schema version ${newer}, newer than this flowlog (${migrations.length})`,
    );
  });
});

describe("the PostgreSQL schema is the SQLite schema (issue 15)", () => {
  /** Table -> its columns (name, and whether it may hold NULL) and its own indexes (name: columns). */
  type Schema = Record<string, { columns: string[]; indexes: string[] }>;

  const sqliteSchema = (): Schema => {
    const db = openDatabase(":memory:");
    try {
      const tables = db
        .prepare(
          "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .pluck()
        .all() as string[];
      return Object.fromEntries(
        tables.map((table) => {
          const columns = db.pragma(`table_info(${table})`) as {
            name: string;
            notnull: number;
            pk: number;
          }[];
          const indexes = db
            .prepare(
              "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
            )
            .pluck()
            .all(table) as string[];
          return [
            table,
            {
              // SQLite lets a rowid table's PRIMARY KEY hold NULL; PostgreSQL never does, nor does flowlog write one.
              columns: columns.map((c) => `${c.name}${c.notnull || c.pk ? " NOT NULL" : ""}`),
              indexes: indexes
                .map((index) => {
                  const keys = db.pragma(`index_info(${index})`) as { name: string }[];
                  return `${index}: ${keys.map((k) => k.name).join(", ")}`;
                })
                .sort(),
            },
          ];
        }),
      );
    } finally {
      db.close();
    }
  };

  const postgresSchema = async (pool: PostgresPool): Promise<Schema> => {
    const columns = await pool.query<{ table: string; column: string; nullable: string }>(
      `SELECT table_name AS table, column_name AS column, is_nullable AS nullable FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name <> 'schema_migrations' ORDER BY table_name, ordinal_position`,
    );
    const indexes = await pool.query<{ table: string; index: string; keys: string }>(
      `SELECT t.relname AS table, i.relname AS index,
         string_agg(a.attname, ', ' ORDER BY k.position) AS keys
       FROM pg_index x
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
       CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, position)
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
       WHERE NOT x.indisprimary AND NOT x.indisunique
       GROUP BY 1, 2`,
    );
    const schema: Schema = {};
    for (const { table, column, nullable } of columns.rows) {
      schema[table] ??= { columns: [], indexes: [] };
      schema[table].columns.push(`${column}${nullable === "NO" ? " NOT NULL" : ""}`);
    }
    for (const { table, index, keys } of indexes.rows) schema[table]?.indexes.push(`${index}: ${keys}`);
    for (const table of Object.values(schema)) table.indexes.sort();
    return schema;
  };

  /**
   * D45's word index is each store's own by design: an FTS5 table (with the shadow tables FTS5 keeps)
   * on SQLite, a tsvector table under a GIN index on PostgreSQL. Everything else is the same.
   */
  const withoutSearchIndex = (schema: Schema): Schema =>
    Object.fromEntries(Object.entries(schema).filter(([table]) => !/^log_search(_|$)/.test(table)));

  it("has the tables, columns (in order, with their NOT NULL) and indexes of the latest SQLite schema", async () => {
    const url = await server.createDatabase();
    const postgres = await withPool(url, postgresSchema);
    expect(withoutSearchIndex(postgres)).toEqual(withoutSearchIndex(sqliteSchema()));
    expect(postgres.log_search).toEqual({
      columns: ["log_id NOT NULL", "words NOT NULL"],
      indexes: ["log_search_by_word: words"],
    });
    expect(sqliteSchema().log_search?.columns).toEqual(["words"]);
  });
});

describe("a lost database is a retryable refusal, and service resumes by itself (issue 15)", () => {
  it("statements fail with StoreUnavailableError while the server is down, naming nothing of it, and run again once it is back", async () => {
    const url = await server.createDatabase();
    await withPool(url, async (pool) => {
      await pool.query(
        "INSERT INTO users (id, email, plan, created_at) VALUES ('usr_1', 'a@example.com', 'free', 1)",
      );
      // An open transaction's connection and an idle one both die with the server.
      const inTransaction = await pool.connect();
      await inTransaction.query("BEGIN");

      await server.pause();
      try {
        const refused = await pool.query("SELECT count(*) FROM users").catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(StoreUnavailableError);
        expect((refused as Error).message).toBe("the database is unreachable; retry shortly");
        const broken = await inTransaction.query("SELECT 1").catch((error: unknown) => error);
        expect(broken).toBeInstanceOf(StoreUnavailableError);
        inTransaction.release(true);
        // A statement that is wrong stays its own error, not "unavailable".
        expect(isUnavailable(new Error('relation "nope" does not exist'))).toBe(false);
      } finally {
        await server.resume();
      }

      const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM users");
      expect(rows).toEqual([{ n: 1 }]);
    });
  });
});
