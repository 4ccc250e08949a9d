import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { resolvePostgresBinaries } from "../../src/tools/postgres-binaries.js";
import {
  initPostgresCluster,
  postgresAccount,
  postgresServerArgs,
  postgresSuperuser,
} from "../../src/tools/postgres-server.js";
import { freeListeningPort } from "../../src/util/free-port.js";

/** A PostgreSQL server of one test file or bench, in a temp directory of its own (D32). */
export interface PostgresServer {
  /**
   * A fresh, empty database and the URL to it. Its collation is ICU's en-US, whose order is not byte
   * order, as on a server whose locale is a language's: the store must not depend on the server's.
   */
  createDatabase(): Promise<string>;
  /** The superuser's URL to the server's `postgres` database, for another process to create databases with. */
  adminUrl: string;
  /** Stops the server (its sessions end, new connections are refused) and keeps its data. */
  pause(): Promise<void>;
  /** Starts the paused server again on the same port, with the same data. */
  resume(): Promise<void>;
  /** Stops the server and deletes its directory. */
  stop(): Promise<void>;
}

export interface PostgresServerOptions {
  /** Keep PostgreSQL's own durability settings (fsync on each commit), for benches; tests skip fsync. */
  durable?: boolean;
}

/**
 * initdb into a temp directory, a free port, and the server's socket in the same directory, so nothing is
 * shared with a system cluster or another run. Its socket takes peer authentication; loopback TCP is
 * trusted: the server is a throwaway of one test run, and its URLs go without a password to other processes
 * and into tests that compare what flowlog prints of them (postgres-database.test.ts). The cluster, which
 * outlives a run, takes passwords instead (src/cluster/cluster.ts, issue 49). The server
 * dies with this process even when it is killed (the parent-death signal), and a start that fails
 * leaves nothing behind.
 */
export async function startPostgres(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const binaries = await resolvePostgresBinaries();
  const dir = await mkdtemp(path.join(tmpdir(), "flowlog-pg-"));
  let server: ChildProcess | undefined;
  let admin: pg.Client | undefined;
  const stop = async () => {
    await admin?.end().catch(() => undefined);
    if (server) await stopServer(server);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const asOwner = await postgresAccount(dir, { dieWithParent: true });
    const dataDir = path.join(dir, "data");
    // No fsync of a throwaway cluster's initdb.
    await initPostgresCluster(binaries, asOwner, dataDir, { durable: false, tcp: "trust" });
    // Bound again after a pause: a port outside the ephemeral range stays ours meanwhile.
    const port = await freeListeningPort();
    const settings: Record<string, string> = options.durable
      ? {}
      : { fsync: "off", synchronous_commit: "off", full_page_writes: "off" };
    const args = postgresServerArgs(dataDir, port, dir, settings);
    const superuser = postgresSuperuser();
    const url = (database: string) => `postgres://${superuser}@127.0.0.1:${port}/${database}`;
    const launch = async () => {
      server = spawn(...asOwner(binaries.postgres, args), {
        stdio: ["ignore", "ignore", "pipe"],
      });
      await ready(server);
      admin = new pg.Client({ connectionString: url("postgres") });
      await admin.connect();
    };
    await launch();
    let databases = 0;
    return {
      async createDatabase() {
        if (!admin) throw new Error("the PostgreSQL server is paused");
        return createDatabaseWith(admin, url(`flowlog_${++databases}`));
      },
      adminUrl: url("postgres"),
      async pause() {
        await admin?.end().catch(() => undefined);
        admin = undefined;
        if (server) await stopServer(server);
      },
      resume: launch,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Creates the database `url` names through `admin`, a connection to the same server. Its collation is
 * ICU's en-US, whose order is not byte order, as on a server whose locale is a language's.
 */
export async function createDatabaseWith(admin: pg.ClientBase, url: string): Promise<string> {
  const name = new URL(url).pathname.slice(1);
  await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  return url;
}

/** Resolves once the server accepts connections; rejects with its last words if it exits first. */
function ready(server: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = "";
    server.stderr?.setEncoding("utf8");
    server.stderr?.on("data", (chunk: string) => {
      // Kept short: the stream is read to its end so the server never blocks on a full pipe.
      log = (log + chunk).slice(-4_000);
      if (log.includes("database system is ready to accept connections")) resolve();
    });
    server.on("error", reject);
    server.on("exit", (code, signal) =>
      reject(new Error(`postgres exited (${signal ?? `exit code ${code}`}) before it was ready:\n${log}`)),
    );
  });
}

/** A fast shutdown (open sessions are ended), and a kill if it has not finished in ten seconds. */
async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.once("exit", resolve));
  server.kill("SIGINT");
  const timer = setTimeout(() => server.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}
