import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

/** How many of the slowest files the summary names. */
const slowestShown = 15;

/**
 * Ends the run with the plain "N passed, N failed" line that CI reads to tell a run that tested
 * nothing from one that passed, after the files that took longest: where the suite's time goes
 * (issue 50) is then in every run's log, CI's included, without a second run to measure it.
 */
export default class SummaryReporter implements Reporter {
  private readonly runStarted = Date.now();
  /** When each file began and ended, in seconds from the run's start: how busy the workers were. */
  private readonly spans = new Map<string, { start: number; end?: number }>();

  onTestModuleStart(module: TestModule): void {
    this.spans.set(this.nameOf(module), { start: (Date.now() - this.runStarted) / 1000 });
  }

  onTestModuleEnd(module: TestModule): void {
    const span = this.spans.get(this.nameOf(module));
    if (span) span.end = (Date.now() - this.runStarted) / 1000;
  }

  private nameOf(module: TestModule): string {
    return `${module.project.name} ${path.relative(process.cwd(), module.moduleId)}`;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed" || state === "failed" || state === "skipped") counts[state]++;
      }
    }
    const durations = testModules
      .map((module) => ({
        name: this.nameOf(module),
        seconds: module.diagnostic().duration / 1000,
        ...this.spans.get(this.nameOf(module)),
      }))
      .sort((a, b) => b.seconds - a.seconds);
    // Every file's time, for a run compared with another (FLOWLOG_TEST_DURATIONS=file.json).
    const durationsFile = process.env.FLOWLOG_TEST_DURATIONS;
    if (durationsFile) writeFileSync(durationsFile, `${JSON.stringify(durations, null, 1)}\n`);
    if (durations.length > 1) {
      const total = durations.reduce((sum, file) => sum + file.seconds, 0);
      console.log(`\nSlowest files (${total.toFixed(0)} s in all ${durations.length} files):`);
      for (const file of durations.slice(0, slowestShown)) {
        console.log(`${file.seconds.toFixed(1).padStart(8)} s  ${file.name}`);
      }
    }
    console.log(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
