import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { createDatabaseWith, type PostgresServer } from "./postgres.js";

/**
 * The run's one PostgreSQL server (global-setup-postgres.ts), for a test file that only needs databases:
 * each `createDatabase` makes a new one on it, named so that files running side by side never meet. It
 * cannot be paused or stopped from a file (the files after it use it too); a test that stops its server
 * starts one of its own with startPostgres.
 */
export function sharedPostgres(): PostgresServer {
  const adminUrl = inject("postgresAdminUrl");
  const refuse = async () => {
    throw new Error("the run's shared PostgreSQL server cannot be paused: start one with startPostgres");
  };
  return {
    async createDatabase() {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        const url = new URL(adminUrl);
        url.pathname = `/flowlog_${randomBytes(6).toString("hex")}`;
        return await createDatabaseWith(admin, url.href);
      } finally {
        await admin.end();
      }
    },
    adminUrl,
    pause: refuse,
    resume: refuse,
    // The databases go with the server at the end of the run.
    stop: async () => undefined,
  };
}
