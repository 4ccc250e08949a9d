import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    reporters: ["default", "./test/support/summary-reporter.ts"],
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    // Real servers at the edges (style.md): worker bundling and Temporal round trips take seconds.
    testTimeout: 60_000,
    // beforeAll hooks bundle workflows and start servers. (Global setup has no timeout, which leaves room for
    // a first-time `go install` of the Temporal CLI.)
    hookTimeout: 180_000,
  },
});
