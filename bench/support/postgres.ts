import { type PostgresServer, startPostgres } from "../../test/support/postgres.js";
import { shared } from "./quick-run.js";
import type { BenchOptions } from "./report.js";

/**
 * A PostgreSQL server with PostgreSQL's own durability (fsync on each commit), on which a bench makes
 * databases of its own: its own server in full mode; with --quick the run's one (`shared`).
 */
export async function benchPostgres(options: BenchOptions): Promise<PostgresServer> {
  if (!options.quick) return startPostgres({ durable: true });
  const server = await shared(
    "postgres",
    () => startPostgres({ durable: true }),
    (started) => started.stop(),
  );
  return { ...server, stop: async () => undefined };
}
