import { type Command, InvalidArgumentError } from "commander";
import type { MigrateDataOptions } from "./migrate-data-run.js";

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
    // The copy's code (both stores' drivers) loads when the command runs.
    .action(async (options: MigrateDataOptions, command: Command) =>
      (await import("./migrate-data-run.js")).migrateData(options, command),
    );
}

function positiveWhole(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10_000)
    throw new InvalidArgumentError("must be a whole number from 1 to 10000");
  return n;
}
