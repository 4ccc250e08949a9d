import { execFile } from "node:child_process";
import { chmod, chown } from "node:fs/promises";
import { userInfo } from "node:os";
import { promisify } from "node:util";
import { findOnPath } from "./executables.js";
import type { PostgresBinaries } from "./postgres-binaries.js";

/** A program and its arguments, ready for spawn or execFile. */
export type Command = (program: string, args: string[]) => [string, string[]];

const exec = promisify(execFile);

/**
 * The superuser initdb makes, in every server these helpers start: named after the user running this
 * process (root included), so that peer authentication on the server's socket lets exactly that user in
 * as it, and no role is left for the account the server runs as (`postgresAccount`).
 */
export function postgresSuperuser(): string {
  try {
    return userInfo().username;
  } catch {
    throw new Error(
      `this user (uid ${process.getuid?.()}) has no name in the passwd database: PostgreSQL's peer ` +
        "authentication needs one",
    );
  }
}

export interface PostgresAccountOptions {
  /**
   * The server stops when the process that started it dies (tests and benches); off for a server meant
   * to outlive the command that started it (`flowlog cluster up`).
   */
  dieWithParent: boolean;
}

/**
 * How to run initdb and postgres over a directory `dir` that will hold the cluster and its socket: as this
 * user, or when this is root (which initdb refuses) as Debian's `postgres` account, else `nobody`, made
 * owner of `dir`. `dir` is closed to everyone else (0700): no other user reaches the socket (issue 49).
 * setpriv (util-linux, in every Debian) switches the user and, when asked, sets the parent-death signal.
 */
export async function postgresAccount(dir: string, options: PostgresAccountOptions): Promise<Command> {
  const setpriv = await findOnPath("setpriv");
  const deathSignal = options.dieWithParent ? ["--pdeathsig=SIGINT"] : [];
  const through =
    (setpriv: string, switches: string[]): Command =>
    (program, args) => [setpriv, [...switches, ...deathSignal, "--", program, ...args]];
  await chmod(dir, 0o700);
  if (process.getuid?.() !== 0) {
    return setpriv && options.dieWithParent ? through(setpriv, []) : (program, args) => [program, args];
  }
  if (!setpriv) throw new Error("setpriv (util-linux) is needed to run PostgreSQL as another user than root");
  const owner = (await account("postgres")) ?? (await account("nobody"));
  if (!owner) throw new Error("no postgres or nobody account to run PostgreSQL as");
  await chown(dir, owner.uid, owner.gid);
  return through(setpriv, [`--reuid=${owner.uid}`, `--regid=${owner.gid}`, "--clear-groups"]);
}

async function account(name: string): Promise<{ uid: number; gid: number } | undefined> {
  const entry = await exec("getent", ["passwd", name]).catch(() => undefined);
  const [, , uid, gid] = entry?.stdout.trim().split(":") ?? [];
  return uid && gid ? { uid: Number(uid), gid: Number(gid) } : undefined;
}

export interface PostgresClusterOptions {
  /** initdb's own fsyncs; a throwaway server skips them. */
  durable: boolean;
  /**
   * How a TCP connection (loopback only, `postgresServerArgs`) is authenticated. `scram-sha-256`: by the
   * role's password, which the superuser has none of, so it comes only through the socket; what the
   * cluster runs (issue 49). `trust`: anyone on this machine, as any role; only for the throwaway servers
   * of tests and benches, whose URLs carry no password (test/support/postgres.ts).
   */
  tcp: "scram-sha-256" | "trust";
}

/**
 * initdb of a new cluster in `dataDir`: peer authentication on its socket (the superuser is the user
 * running this process), `options.tcp` on loopback; UTF-8 with byte order by default.
 */
export async function initPostgresCluster(
  binaries: PostgresBinaries,
  asOwner: Command,
  dataDir: string,
  options: PostgresClusterOptions,
): Promise<void> {
  const flags = [
    ...["--auth-local=peer", `--auth-host=${options.tcp}`, "--encoding=UTF8", "--locale=C"],
    ...(options.durable ? [] : ["--no-sync"]),
  ];
  await exec(...asOwner(binaries.initdb, ["-D", dataDir, "-U", postgresSuperuser(), ...flags]));
}

/** postgres's arguments: loopback only, its socket in `socketDir`, and any further settings. */
export function postgresServerArgs(
  dataDir: string,
  port: number,
  socketDir: string,
  settings: Record<string, string> = {},
): string[] {
  const all = { listen_addresses: "127.0.0.1", unix_socket_directories: socketDir, ...settings };
  return [
    "-D",
    dataDir,
    "-p",
    `${port}`,
    ...Object.entries(all).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
  ];
}
