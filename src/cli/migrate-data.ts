import { existsSync } from "node:fs";
import { type Command, InvalidArgumentError } from "commander";
import { loadConfig, loadDotEnv } from "../config/config.js";
import { databaseFile, openDatabase } from "../store/database.js";
import {
  copySqliteToPostgres,
  DataCopyError,
  type TableCheck,
  verifyCopy,
} from "../store/postgres/copy-from-sqlite.js";
import { DatabaseUrlError, maskPassword, openPostgres } from "../store/postgres/database.js";

interface MigrateDataOptions {
  to?: string;
  batchRows: number;
}

/**
 * `flowlog migrate-data` (issue 15): copies the SQLite store of FLOWLOG_DATA_DIR into the PostgreSQL
 * database of FLOWLOG_DATABASE_URL, the store every command uses once it is set, migrated first, for users
 * who start small and grow. It resumes where a stopped run ended, and succeeds only when every table's
 * count and checksum agree. Exit codes: 0 copied and verified, 1 the verification found a difference,
 * 2 it could not start.
 */
export function registerMigrateDataCommand(program: Command): void {
  program
    .command("migrate-data")
    .description(
      "copy the SQLite store of FLOWLOG_DATA_DIR into a PostgreSQL database (resumable, verified); " +
        "stop every flowlog process using the SQLite file first",
    )
    .option(
      "--to <url>",
      "the target postgres:// URL, without a password (PGPASSWORD or ~/.pgpass); default FLOWLOG_DATABASE_URL",
    )
    .option("--batch-rows <n>", "rows per committed batch", positiveWhole, 500)
    .action(async (options: MigrateDataOptions, command: Command) => {
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
    });
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

function positiveWhole(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10_000)
    throw new InvalidArgumentError("must be a whole number from 1 to 10000");
  return n;
}
