import { existsSync } from "node:fs";
import type { Command } from "commander";
import { loadConfig, loadDotEnv } from "../config/config.js";
import { databaseFile, openDatabase } from "../store/database.js";
import {
  copySqliteToPostgres,
  DataCopyError,
  type TableCheck,
  verifyCopy,
} from "../store/postgres/copy-from-sqlite.js";
import { DatabaseUrlError, maskPassword, openPostgres } from "../store/postgres/database.js";

export interface MigrateDataOptions {
  to?: string;
  batchRows: number;
}

/** `flowlog migrate-data`'s work (migrate-data.ts declares the command): copy, verify, report. */
export async function migrateData(options: MigrateDataOptions, command: Command): Promise<void> {
  loadDotEnv();
  const config = loadConfig();
  const url = options.to ?? config.databaseUrl;
  const fail = (message: string) =>
    command.error(`error: ${message}`, { exitCode: 2, code: "flowlog.migrate-data.refused" });
  if (!url) return fail("no target: set FLOWLOG_DATABASE_URL to the postgres:// URL of the database");
  // Issue 49: every user of the machine reads a command line (ps, /proc/<pid>/cmdline); only its
  // owner reads a process's environment.
  if (options.to !== undefined && maskPassword(options.to) !== options.to) {
    return fail(
      `--to ${maskPassword(options.to)} holds a password, which \`ps\` shows to every user of this machine: ` +
        "set FLOWLOG_DATABASE_URL to the URL instead (or keep the password in PGPASSWORD or ~/.pgpass)",
    );
  }
  const file = databaseFile(config.dataDir);
  // openDatabase would create an empty store: a wrong FLOWLOG_DATA_DIR must not copy nothing.
  if (!existsSync(file)) return fail(`no SQLite store at ${file} (FLOWLOG_DATA_DIR)`);
  const checks = await migrate(file, url, options).catch((error: unknown) => {
    if (error instanceof DataCopyError || error instanceof DatabaseUrlError) fail(error.message);
    throw error;
  });
  printChecks(checks);
  if (checks.some((check) => !check.matches)) {
    // Not command.error: the program turns every refusal into exit 2, and this is no refusal.
    console.error("error: the copy differs from the source in the tables marked DIFFERS");
    process.exitCode = 1;
    return;
  }
  console.log(`copied and verified: ${file} -> ${maskPassword(url)}`);
}

async function migrate(file: string, url: string, options: MigrateDataOptions): Promise<TableCheck[]> {
  const source = openDatabase(file);
  const target = await openPostgres(url).catch((error: unknown) => {
    source.close();
    throw error;
  });
  try {
    let shown = "";
    await copySqliteToPostgres(source, target, {
      batchRows: options.batchRows,
      onProgress: (table, copied, total) => {
        const line = `${table}: ${copied}/${total}`;
        if (process.stderr.isTTY) process.stderr.write(`\r${line}\x1b[K`);
        else if (table !== shown || copied === total) console.error(line);
        shown = table;
      },
    });
    if (process.stderr.isTTY) process.stderr.write("\n");
    return await verifyCopy(source, target);
  } finally {
    source.close();
    await target.end();
  }
}

function printChecks(checks: readonly TableCheck[]): void {
  const width = Math.max(...checks.map((check) => check.table.length));
  for (const check of checks) {
    const verdict = check.matches ? "ok" : "DIFFERS";
    const counts =
      check.sourceRows === check.targetRows
        ? `${check.sourceRows} rows`
        : `${check.sourceRows} -> ${check.targetRows} rows`;
    console.log(
      `${check.table.padEnd(width)}  ${verdict.padEnd(7)}  ${counts}  sha256 ${check.targetChecksum.slice(0, 16)}`,
    );
  }
}
