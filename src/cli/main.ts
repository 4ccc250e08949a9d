import { Command } from "commander";
import { registerAccountCommands } from "./accounts.js";
import { registerClusterCommand } from "./cluster.js";
import { registerLogsCommand } from "./logs/logs-command.js";
import { registerMigrateDataCommand } from "./migrate-data.js";
import { registerRunCommand } from "./run.js";
import { registerSeedCommand } from "./seed.js";

// The long-running commands' modules (the server, the worker, Temporal's SDK), the configuration's schema and
// the store load when a command needs them, so the short ones (`--help`, `logs list`, the API's clients)
// start without them.
const program = new Command("flowlog")
  .description(
    "Workflow-execution logs and notifications: gRPC, Connect and REST on one port, runs on Temporal",
  )
  .showHelpAfterError()
  // Every bad input exits 2, commander's usage errors (a missing option) included; subcommands inherit it.
  .exitOverride((error) => {
    if (error.exitCode !== 0) process.exit(2);
    process.exit(0);
  });

program
  .command("dev")
  .description("start a Temporal dev server (unless TEMPORAL_ADDRESS is set), the API server and the worker")
  .action(async () => (await import("./dev.js")).runDev(await config()));

program
  .command("serve")
  .description("start only the API server (scale it out beside `flowlog worker`)")
  .action(async () => (await import("./serve.js")).runServe(await config()));

program
  .command("worker")
  .description("start only the Temporal worker")
  .action(async () => (await import("./worker.js")).runWorker(await config()));

registerAccountCommands(program, openContext);
registerSeedCommand(program, openContext);
registerRunCommand(program, openContext);
registerMigrateDataCommand(program);
registerClusterCommand(program);
registerLogsCommand(program);

async function config() {
  const { loadConfig, loadDotEnv } = await import("../config/config.js");
  loadDotEnv();
  return loadConfig();
}

/** Commands that work on the data directly open the store the server uses (D23, D32). */
async function openContext() {
  const c = await config();
  const { openConfiguredStore } = await import("../store/open-store.js");
  return { config: c, store: await openConfiguredStore(c) };
}

try {
  await program.parseAsync();
} catch (error) {
  // A bad FLOWLOG_DATABASE_URL or an unreachable database stops any command with one line (D32).
  const [{ ConfigError }, { DatabaseUrlError }] = await Promise.all([
    import("../config/config.js"),
    import("../store/postgres/database.js"),
  ]);
  if (error instanceof ConfigError || error instanceof DatabaseUrlError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}
