import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Db, openDatabase } from "../../src/store/database.js";
import { migrations as sqliteMigrations } from "../../src/store/migrations.js";
import { openPostgres, type PostgresPool } from "../../src/store/postgres/database.js";
import { migrations as postgresMigrations } from "../../src/store/postgres/migrations.js";
import { namedStatement } from "../../src/store/postgres/named-parameters.js";
import { sqliteAddon } from "../../src/store/sqlite-addon.js";
import type { PostgresServer } from "./postgres.js";

/** How a contract test makes the areas it holds to their promises, on one connection of either kind. */
export interface AreaMakers<A> {
  sqlite(db: Db): A;
  postgres(pool: PostgresPool): A;
}

/** An empty, migrated database of one kind, with the test's areas on a first connection. */
export interface ContractDatabase<A> {
  areas: A;
  /** The areas again on a connection of their own, as another process would have them. */
  connect(): Promise<A>;
  /** Runs a statement written with `@name` parameters (both stores have the same tables): fixtures, checks. */
  query<R = Record<string, unknown>>(sql: string, parameters?: object): Promise<R[]>;
  /**
   * Another process committing small writes to the database as fast as it can, as the API server does
   * with its token buckets while the worker records deliveries; resolves once it writes, to its stop.
   */
  busyWriter(): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export type StoreKind<A> = [name: "SQLite" | "PostgreSQL", open: () => Promise<ContractDatabase<A>>];

/**
 * The two stores (D32) for `describe.each`: a SQLite file in a temp directory, and a fresh database on
 * the test file's PostgreSQL server. Each connection opened is closed with the database.
 */
export function storeKinds<A>(makers: AreaMakers<A>, server: () => PostgresServer): StoreKind<A>[] {
  return [
    ["SQLite", () => openSqlite(makers)],
    ["PostgreSQL", async () => openPostgresDatabase(makers, await server().createDatabase())],
  ];
}

/**
 * A database an older flowlog left: migrated only up to `version` (a schema version: the number of
 * migrations applied), filled with the older schema's rows in plain SQL, then opened by this flowlog, which
 * migrates the rest.
 */
export interface OlderDatabase<A> {
  older(sql: string): Promise<void>;
  /** Opens the database as this flowlog does, migrating it, and makes the test's areas on it. */
  upgrade(): Promise<A>;
  close(): Promise<void>;
}

/**
 * The two stores at an older schema for `describe.each`; `version` finds it in each store's own list of
 * migrations. A maker may check the upgraded database before it makes the areas (SQLite's foreign keys).
 */
export function olderStoreKinds<A>(
  version: (migrations: readonly unknown[]) => number,
  makers: AreaMakers<A>,
  server: () => PostgresServer,
): [name: "SQLite" | "PostgreSQL", open: () => Promise<OlderDatabase<A>>][] {
  return [
    [
      "SQLite",
      async () => {
        const dir = await mkdtemp(path.join(tmpdir(), "flowlog-older-"));
        const file = path.join(dir, "flowlog.sqlite");
        let db = openDatabase(file, version(sqliteMigrations));
        return {
          older: async (sql) => void db.exec(sql),
          async upgrade() {
            db.close();
            db = openDatabase(file);
            return makers.sqlite(db);
          },
          async close() {
            db.close();
            await rm(dir, { recursive: true, force: true });
          },
        };
      },
    ],
    [
      "PostgreSQL",
      async () => {
        const url = await server().createDatabase();
        let pool = await openPostgres(url, { schemaVersion: version(postgresMigrations) });
        return {
          older: async (sql) => void (await pool.query(sql)),
          async upgrade() {
            await pool.end();
            pool = await openPostgres(url);
            return makers.postgres(pool);
          },
          close: () => pool.end(),
        };
      },
    ],
  ];
}

async function openSqlite<A>(makers: AreaMakers<A>): Promise<ContractDatabase<A>> {
  const dir = await mkdtemp(path.join(tmpdir(), "flowlog-contract-"));
  const file = path.join(dir, "flowlog.sqlite");
  const first = openDatabase(file);
  const connections = [first];
  return {
    areas: makers.sqlite(first),
    async connect() {
      const db = openDatabase(file);
      connections.push(db);
      return makers.sqlite(db);
    },
    async query<R>(sql: string, parameters?: object) {
      const statement = first.prepare(sql);
      const bound = parameters === undefined ? [] : [parameters];
      if (!statement.reader) {
        statement.run(...bound);
        return [];
      }
      return statement.all(...bound) as R[];
    },
    busyWriter: () =>
      startWriter(
        `const db = new (require("better-sqlite3"))(process.argv[1], ${JSON.stringify({ nativeBinding: sqliteAddon })});
         db.pragma("busy_timeout = 5000");
         const write = db.prepare(${JSON.stringify(writerSql)});
         process.stdout.write("ready\\n");
         for (;;) write.run({ now: Date.now() });`,
        file,
      ),
    async close() {
      for (const db of connections) db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function openPostgresDatabase<A>(makers: AreaMakers<A>, url: string): Promise<ContractDatabase<A>> {
  const first = await openPostgres(url);
  const pools = [first];
  const writer = namedStatement(writerSql);
  return {
    areas: makers.postgres(first),
    async connect() {
      const pool = await openPostgres(url, { maxConnections: 1 });
      pools.push(pool);
      return makers.postgres(pool);
    },
    async query<R>(sql: string, parameters?: object) {
      return (await first.query(namedStatement(sql)(parameters))).rows as R[];
    },
    busyWriter: () =>
      startWriter(
        `const client = new (require("pg").Client)(process.argv[1]);
         (async () => {
           await client.connect();
           process.stdout.write("ready\\n");
           for (;;) await client.query(${JSON.stringify(writer({ now: 0 }).text)}, [Date.now()]);
         })();`,
        url,
      ),
    async close() {
      await Promise.all(pools.map((pool) => pool.end()));
    },
  };
}

/** What the busy writer commits, over and over: a token bucket of its own. */
const writerSql = `INSERT INTO rate_limit_buckets (key, tokens, updated_at, last_allowed)
  VALUES ('other-process', 1, @now, @now)
  ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`;

/** Starts `script` in another Node process with `target` as its argument; resolves once it writes. */
function startWriter(script: string, target: string): Promise<() => Promise<void>> {
  const child = spawn(process.execPath, ["-e", script, target], { stdio: ["ignore", "pipe", "inherit"] });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill();
    await exited;
  };
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the busy writer exited (${code}) before it wrote`)));
    child.stdout?.once("data", () => resolve(stop));
  });
}

/** A notification subscription as a contract test needs it: only the columns the areas read. */
export interface SubscriptionFixture {
  id: string;
  workspaceId: string;
  channel?: "webhook" | "email" | "slack";
  url?: string;
  alertRule?: { rule: string; threshold: number; windowHours: number | null } | null;
  active?: boolean;
  deletedAt?: number | null;
}

/** Writes the workspace (once) and the subscription, as the subscriptions area would have. */
export async function addSubscription(db: ContractDatabase<unknown>, fixture: SubscriptionFixture) {
  const channel = fixture.channel ?? "webhook";
  await db.query(
    `INSERT INTO workspaces (id, name, created_at) VALUES (@workspaceId, 'Contract', 0)
     ON CONFLICT (id) DO NOTHING`,
    { workspaceId: fixture.workspaceId },
  );
  await db.query(
    `INSERT INTO notification_subscriptions (id, workspace_id, channel, config_json, all_workflows,
       alert_rule_json, active, created_at, updated_at, deleted_at)
     VALUES (@id, @workspaceId, @channel, @configJson, 1, @alertRuleJson, @active, 0, 0, @deletedAt)`,
    {
      id: fixture.id,
      workspaceId: fixture.workspaceId,
      channel,
      // As the subscriptions area writes it: the channel has its own column.
      configJson: JSON.stringify(
        channel === "email" ? { recipients: ["ops@example.test"] } : { url: fixture.url ?? "" },
      ),
      alertRuleJson: fixture.alertRule ? JSON.stringify(fixture.alertRule) : null,
      active: fixture.active === false ? 0 : 1,
      deletedAt: fixture.deletedAt ?? null,
    },
  );
}
