import type { Command } from "commander";
import { plans } from "../limits/plans.js";
import { defaultPlan, defaultWorkspaceName } from "../services/accounts/defaults.js";
import type { JsonOption } from "./accounts-run.js";
import { type CommandContext, withContext } from "./context.js";

type AccountCommands = typeof import("./accounts-run.js");

const planHelp = plans.join(", ");

/**
 * `flowlog bootstrap` and `flowlog user|workspace|apikey ...` (D6). They open the store in the data
 * dir directly, so they work with no server running, and go through the same AccountsService as the
 * admin RPCs. `--json` prints the admin API's own JSON shapes.
 */
export function registerAccountCommands(
  program: Command,
  openContext: () => CommandContext | Promise<CommandContext>,
): void {
  // What the commands do (the admin API's messages, the account rules) loads when one of them runs, so
  // that declaring them costs every other command nothing. A refusal exits with 2 (withContext).
  const run = (command: (commands: AccountCommands, context: CommandContext) => Promise<void>) =>
    withContext(openContext, async (context) => command(await import("./accounts-run.js"), context));

  program
    .command("bootstrap")
    .description("create a user, a workspace and an API key in one step, and print them (the key only now)")
    .option("--plan <plan>", planHelp, defaultPlan)
    .option("--email <email>", "the user's e-mail address (default: a generated one)")
    .option("--workspace-name <name>", "the workspace's name", defaultWorkspaceName)
    .option("--json", "print one JSON object")
    .action((options: { plan: string; email?: string; workspaceName: string } & JsonOption) =>
      run((commands, context) => commands.bootstrap(context, options)),
    );

  const user = program.command("user").description("manage users");
  user
    .command("create")
    .description("create a user")
    .requiredOption("--email <email>", "the user's e-mail address")
    .option("--plan <plan>", planHelp, defaultPlan)
    .option("--json", "print JSON")
    .action((options: { email: string; plan: string } & JsonOption) =>
      run((commands, context) => commands.createUser(context, options)),
    );
  user
    .command("list")
    .description("list users")
    .option("--json", "print JSON")
    .action((options: JsonOption) => run((commands, context) => commands.listUsers(context, options)));

  const workspace = program.command("workspace").description("manage workspaces");
  workspace
    .command("create")
    .description("create a workspace")
    .requiredOption("--name <name>", "the workspace's name")
    .option("--member <userId...>", "users who may read the workspace's logs")
    .option("--json", "print JSON")
    .action((options: { name: string; member?: string[] } & JsonOption) =>
      run((commands, context) => commands.createWorkspace(context, options)),
    );
  workspace
    .command("add-member")
    .description("make a user a member of a workspace")
    .argument("<workspaceId>")
    .requiredOption("--user <userId>", "the user to add")
    .option("--json", "print JSON")
    .action((workspaceId: string, options: { user: string } & JsonOption) =>
      run((commands, context) => commands.addWorkspaceMember(context, workspaceId, options)),
    );
  workspace
    .command("list")
    .description("list workspaces")
    .option("--user <userId>", "only the workspaces this user belongs to")
    .option("--json", "print JSON")
    .action((options: { user?: string } & JsonOption) =>
      run((commands, context) => commands.listWorkspaces(context, options)),
    );

  const apikey = program.command("apikey").description("manage API keys");
  apikey
    .command("create")
    .description("create an API key for a user; the key is printed this once")
    .requiredOption("--user <userId>", "the key's user")
    .option("--json", "print JSON")
    .action((options: { user: string } & JsonOption) =>
      run((commands, context) => commands.createApiKey(context, options)),
    );
  apikey
    .command("list")
    .description("list a user's API keys (prefix only)")
    .requiredOption("--user <userId>", "the keys' user")
    .option("--json", "print JSON")
    .action((options: { user: string } & JsonOption) =>
      run((commands, context) => commands.listApiKeys(context, options)),
    );
  apikey
    .command("revoke")
    .description("revoke an API key")
    .argument("<keyId>")
    .option("--json", "print JSON")
    .action((keyId: string, options: JsonOption) =>
      run((commands, context) => commands.revokeApiKey(context, keyId, options)),
    );
}
