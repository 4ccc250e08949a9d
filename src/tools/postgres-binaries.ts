import { readdir } from "node:fs/promises";
import path from "node:path";
import { installDebianPackages } from "./debian-packages.js";
import { isExecutable, pathDirs } from "./executables.js";

/** The PostgreSQL server programs a throwaway server is made with (D32: tests and benches start their own). */
export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/** Where Debian's packages put each major version's server programs; they are not on PATH there. */
const debianVersionsDir = "/usr/lib/postgresql";

/**
 * The server programs of one installation: from PATH, else Debian's newest version, else Debian's
 * `postgresql` package installed now (D32: PostgreSQL 15 as Debian ships it), the way the Temporal CLI is
 * provided when missing, so that `npm test` is still the whole set-up on a fresh machine.
 */
export async function resolvePostgresBinaries(): Promise<PostgresBinaries> {
  return (await findPostgresBinaries()) ?? (await installDebianPostgres());
}

async function findPostgresBinaries(): Promise<PostgresBinaries | undefined> {
  for (const dir of [...pathDirs(), ...(await debianBinDirs())]) {
    // Both from one directory, so initdb's cluster is one that postgres of the same version can run.
    const binaries = { initdb: path.join(dir, "initdb"), postgres: path.join(dir, "postgres") };
    if ((await isExecutable(binaries.initdb)) && (await isExecutable(binaries.postgres))) return binaries;
  }
  return undefined;
}

/** `/usr/lib/postgresql/<major>/bin`, newest major first. */
async function debianBinDirs(): Promise<string[]> {
  const versions = await readdir(debianVersionsDir).catch(() => []);
  return versions
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => path.join(debianVersionsDir, version, "bin"));
}

async function installDebianPostgres(): Promise<PostgresBinaries> {
  const missing =
    "PostgreSQL's server programs (initdb, postgres) are not on PATH nor in /usr/lib/postgresql/*/bin";
  await installDebianPackages(["postgresql"], missing);
  const installed = await findPostgresBinaries();
  if (!installed) throw new Error(`${missing}, even after apt-get install postgresql`);
  return installed;
}
