import type { Reporter, TestModule } from "vitest/node";

/**
 * Ends the run with the plain "N passed, N failed" line that CI reads to tell a run that tested
 * nothing from one that passed.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed" || state === "failed" || state === "skipped") counts[state]++;
      }
    }
    console.log(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
