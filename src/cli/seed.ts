import { ConnectError } from "@connectrpc/connect";
import { type Command, InvalidArgumentError } from "commander";
import type { Config } from "../config/config.js";
import { seedWorkspace } from "../seed/seed.js";
import type { Store } from "../store/store.js";

interface SeedCommandOptions {
  workspace: string;
  executions: number;
  workflows: number;
  days: number;
  seed?: string;
}

/**
 * `flowlog seed` (issue 3, item 7): demo and test data written through the store the worker uses.
 * Refusals (unknown workspace, out-of-range counts) exit with code 2, like a bad configuration.
 */
export function registerSeedCommand(
  program: Command,
  openContext: () => Promise<{ config: Config; store: Store }>,
): void {
  program
    .command("seed")
    .description(
      "write realistic demo executions (log entries, trace spans, snapshots) into a workspace, billed to no one",
    )
    .requiredOption("--workspace <id>", "workspace to fill")
    .requiredOption("--executions <n>", "number of executions to write", wholeNumber)
    .option("--workflows <m>", "workflows the workspace should have at least", wholeNumber, 5)
    .option("--days <d>", "spread execution starts over the last D days", wholeNumber, 30)
    .option("--seed <text>", "reproduce an earlier data set (printed at the end of every run)")
    .action(async (options: SeedCommandOptions, command: Command) => {
      const { store } = await openContext();
      let refusal: ConnectError | undefined;
      try {
        await runSeed(store, options);
      } catch (error) {
        if (!(error instanceof ConnectError)) throw error;
        refusal = error;
      } finally {
        await store.close();
      }
      if (refusal)
        command.error(`error: ${refusal.rawMessage}`, { exitCode: 2, code: "flowlog.seed.refused" });
    });
}

async function runSeed(store: Store, options: SeedCommandOptions): Promise<void> {
  const bar = progressBar(process.stderr);
  const started = performance.now();
  const result = await seedWorkspace(store, {
    workspaceId: options.workspace,
    executions: options.executions,
    workflows: options.workflows,
    days: options.days,
    seed: options.seed,
    onProgress: (done, total) => bar.update(done, total, started),
  });
  bar.done();
  const seconds = (performance.now() - started) / 1000;
  const rate = Math.round(options.executions / Math.max(seconds, 0.001));
  console.log(
    `seeded ${count(result.executionsWritten)} executions (${count(result.workflowsCreated)} new workflows) ` +
      `into ${options.workspace} in ${seconds.toFixed(1)} s: ${count(rate)} rows/s (seed ${result.seed})`,
  );
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("must be a whole number");
  return Number(value);
}

const count = (n: number) => n.toLocaleString("en-US");

/** A one-line bar redrawn in place; only on a terminal, so redirected output stays free of \r noise. */
function progressBar(stream: NodeJS.WriteStream) {
  const width = 30;
  return {
    update(done: number, total: number, started: number) {
      if (!stream.isTTY || total === 0) return;
      const filled = Math.round((done / total) * width);
      const rate = Math.round(done / Math.max((performance.now() - started) / 1000, 0.001));
      stream.write(
        `\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${Math.floor((done / total) * 100)}% ` +
          `${count(done)}/${count(total)} ${count(rate)} rows/s`,
      );
    },
    done() {
      if (stream.isTTY) stream.write("\r\x1b[2K");
    },
  };
}
