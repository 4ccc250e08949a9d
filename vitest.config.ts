import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * The API tests that read and write through the store, run a second time with the flowlog they start on
 * PostgreSQL (issue 15, D32): one suite holds both stores to the same promises. The store areas' own
 * contract suites (store-*-contract) cover both in every run.
 */
const onBothStores = [
  "accounts",
  "alert-recovery",
  "archive",
  "auto-disable",
  "bulk-retry",
  "count-quotas",
  "delete-logs",
  "deliveries",
  "deliveries-filters",
  "endpoint-settings",
  "environment",
  "execution-rerun",
  "hold-and-drain",
  "logs-api",
  "logs-export",
  "logs-filters",
  "logs-search",
  "logs-tail",
  "no-activity",
  "recovery",
  "retention",
  "subscriptions",
  "tenant-isolation",
  "triggers",
  "workflows-api",
].map((name) => `test/${name}.test.ts`);

/** What only the PostgreSQL store has (its pools and statement timeouts, D46), in the postgres project only. */
const onPostgresOnly = ["tenant-reads-postgres"].map((name) => `test/${name}.test.ts`);

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summary-reporter.ts"],
    // FLOWLOG_TEST_CPU=<file> records each file's CPU time there (issue 50).
    setupFiles: ["./test/support/file-cpu.ts"],
    pool: "forks",
    // Vitest's default is one file at a time on two cores (cores - 1). The files mostly wait on the real
    // servers they start (Temporal, SMTP, PostgreSQL, Chromium): one at a time kept the cores 45 % busy,
    // two at a time cut the suite from 18 to 11 minutes on two cores and still left them 35-80 % idle;
    // three cut a quiet run from 780-800 s to 600 s. FLOWLOG_TEST_WORKERS sets it (vitest's --maxWorkers
    // does not reach the projects' pools).
    maxWorkers:
      Number(process.env.FLOWLOG_TEST_WORKERS) || Math.min(8, Math.max(3, availableParallelism() + 1)),
    // Each worker process runs file after file over one module graph, instead of a fresh process importing
    // src/ again for every file: that was about a second of CPU per file, 110-130 s of a run's test time
    // (issue 50). Nothing is mocked (style.md), and every file closes what it starts in its own hooks, so
    // a file finds the process as the one before it left it. Twelve API files: 71 -> 57 core-seconds.
    isolate: false,
    // Real servers at the edges (style.md): worker bundling and Temporal round trips take seconds.
    testTimeout: 60_000,
    // beforeAll hooks bundle workflows and start servers. (Global setup has no timeout, which leaves room for
    // a first-time `go install` of the Temporal CLI.)
    hookTimeout: 180_000,
    // expect.poll waits for an eventual state of a real server or browser (a page showing the API's
    // answer, an entry written by the worker). Its default of 1 s was met by a Chromium page applying a
    // filter while both cores ran the rest of the suite; a poll returns as soon as it holds, so a longer
    // bound only changes how long a real failure takes to show. Timing promises live in bench/, not here.
    expect: { poll: { timeout: 10_000 } },
    projects: [
      {
        extends: true,
        test: {
          name: "sqlite",
          include: ["test/**/*.test.ts"],
          exclude: onPostgresOnly,
          globalSetup: ["test/global-setup.ts", "test/global-setup-postgres.ts"],
          provide: { storeKind: "sqlite" },
        },
      },
      {
        extends: true,
        test: {
          name: "postgres",
          include: [...onBothStores, ...onPostgresOnly],
          globalSetup: ["test/global-setup.ts", "test/global-setup-postgres.ts"],
          provide: { storeKind: "postgres" },
        },
      },
    ],
  },
});
