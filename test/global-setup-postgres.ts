import type { TestProject } from "vitest/node";
import { startPostgres } from "./support/postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The store the API under test uses (D32): the same test files run once on each. */
    storeKind: "sqlite" | "postgres";
    /** The superuser URL of the run's PostgreSQL server, in the postgres project only. */
    postgresAdminUrl: string;
  }
}

/**
 * The postgres project's one PostgreSQL server (issue 15): every flowlog a test starts gets a database of
 * its own on it (support/test-store.ts), as the SQLite project gives each a file.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  project.provide("postgresAdminUrl", server.adminUrl);
  return () => server.stop();
}
