import type { TestProject } from "vitest/node";
import { startPostgres } from "./support/postgres.js";
import { shareForRun } from "./support/run-resources.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The store the API under test uses (D32): the same test files run once on each. */
    storeKind: "sqlite" | "postgres";
    /** The superuser URL of the run's PostgreSQL server (support/shared-postgres.ts). */
    postgresAdminUrl: string;
  }
}

/**
 * The run's one PostgreSQL server (issue 15, issue 50): every flowlog a test of the postgres project starts
 * gets a database of its own on it (support/test-store.ts), as the SQLite project gives each a file, and
 * every test file that needs PostgreSQL takes its databases there too (sharedPostgres), but for the few
 * that stop their server, which start one of their own. Both projects share it (support/run-resources.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await shareForRun("postgres", startPostgres, (started) => started.stop());
  project.provide("postgresAdminUrl", server.value.adminUrl);
  return () => server.release();
}
