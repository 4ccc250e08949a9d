import { create, type DescMessage, type MessageShape, toJson } from "@bufbuild/protobuf";
import type { Command } from "commander";
import {
  ApiKeySchema,
  CreateApiKeyResponseSchema,
  ListApiKeysResponseSchema,
  ListUsersResponseSchema,
  ListWorkspacesResponseSchema,
  type User,
  UserSchema,
  type Workspace,
  WorkspaceSchema,
} from "../../gen/flowlog/admin/v1/admin_service_pb.js";
import type { Config } from "../config/config.js";
import { plans } from "../limits/plans.js";
import {
  AccountsService,
  type Bootstrapped,
  defaultPlan,
  defaultWorkspaceName,
} from "../services/accounts/accounts-service.js";
import { apiKeyMessage, userMessage, workspaceMessage } from "../services/accounts/admin-service.js";
import type { Store } from "../store/store.js";
import { withContext } from "./context.js";

export interface AccountsContext {
  config: Config;
  store: Store;
}

interface JsonOption {
  json?: boolean;
}

type Action<A extends unknown[]> = (accounts: AccountsService, config: Config, ...args: A) => Promise<void>;

const planHelp = plans.join(", ");

/**
 * `flowlog bootstrap` and `flowlog user|workspace|apikey ...` (D6). They open the store in the data
 * dir directly, so they work with no server running, and go through the same AccountsService as the
 * admin RPCs. `--json` prints the admin API's own JSON shapes.
 */
export function registerAccountCommands(
  program: Command,
  openContext: () => AccountsContext | Promise<AccountsContext>,
): void {
  const run = actionRunner(openContext);

  program
    .command("bootstrap")
    .description("create a user, a workspace and an API key in one step, and print them (the key only now)")
    .option("--plan <plan>", planHelp, defaultPlan)
    .option("--email <email>", "the user's e-mail address (default: a generated one)")
    .option("--workspace-name <name>", "the workspace's name", defaultWorkspaceName)
    .option("--json", "print one JSON object")
    .action(
      run(
        async (
          accounts,
          config,
          options: { plan: string; email?: string; workspaceName: string } & JsonOption,
        ) => printBootstrap(await accounts.bootstrap(options), config.publicBaseUrl, options),
      ),
    );

  const user = program.command("user").description("manage users");
  user
    .command("create")
    .description("create a user")
    .requiredOption("--email <email>", "the user's e-mail address")
    .option("--plan <plan>", planHelp, defaultPlan)
    .option("--json", "print JSON")
    .action(
      run(async (accounts, _config, options: { email: string; plan: string } & JsonOption) => {
        const created = userMessage(await accounts.createUser(options.email, options.plan));
        print(options, UserSchema, created, () => printUsers([created]));
      }),
    );
  user
    .command("list")
    .description("list users")
    .option("--json", "print JSON")
    .action(
      run(async (accounts, _config, options: JsonOption) => {
        const users = (await accounts.listUsers()).map(userMessage);
        print(options, ListUsersResponseSchema, create(ListUsersResponseSchema, { users }), () =>
          printUsers(users),
        );
      }),
    );

  const workspace = program.command("workspace").description("manage workspaces");
  workspace
    .command("create")
    .description("create a workspace")
    .requiredOption("--name <name>", "the workspace's name")
    .option("--member <userId...>", "users who may read the workspace's logs")
    .option("--json", "print JSON")
    .action(
      run(async (accounts, _config, options: { name: string; member?: string[] } & JsonOption) => {
        const created = workspaceMessage(await accounts.createWorkspace(options.name, options.member));
        print(options, WorkspaceSchema, created, () => printWorkspaces([created]));
      }),
    );
  workspace
    .command("add-member")
    .description("make a user a member of a workspace")
    .argument("<workspaceId>")
    .requiredOption("--user <userId>", "the user to add")
    .option("--json", "print JSON")
    .action(
      run(async (accounts, _config, workspaceId: string, options: { user: string } & JsonOption) => {
        const updated = workspaceMessage(await accounts.addWorkspaceMember(workspaceId, options.user));
        print(options, WorkspaceSchema, updated, () => printWorkspaces([updated]));
      }),
    );
  workspace
    .command("list")
    .description("list workspaces")
    .option("--user <userId>", "only the workspaces this user belongs to")
    .option("--json", "print JSON")
    .action(
      run(async (accounts, _config, options: { user?: string } & JsonOption) => {
        const workspaces = (await accounts.listWorkspaces(options.user)).map(workspaceMessage);
        print(
          options,
          ListWorkspacesResponseSchema,
          create(ListWorkspacesResponseSchema, { workspaces }),
          () => printWorkspaces(workspaces),
        );
      }),
    );

  const apikey = program.command("apikey").description("manage API keys");
  apikey
    .command("create")
    .description("create an API key for a user; the key is printed this once")
    .requiredOption("--user <userId>", "the key's user")
    .option("--json", "print JSON")
    .action(
      run(async (accounts, _config, options: { user: string } & JsonOption) => {
        const { record, key } = await accounts.createApiKey(options.user);
        const response = create(CreateApiKeyResponseSchema, { apiKey: apiKeyMessage(record), key });
        print(options, CreateApiKeyResponseSchema, response, () =>
          console.log(`API key ${record.id} for ${record.userId} (shown this once: store it now)\n${key}`),
        );
      }),
    );
  apikey
    .command("list")
    .description("list a user's API keys (prefix only)")
    .requiredOption("--user <userId>", "the keys' user")
    .option("--json", "print JSON")
    .action(
      run(async (accounts, _config, options: { user: string } & JsonOption) => {
        const apiKeys = (await accounts.listApiKeys(options.user)).map(apiKeyMessage);
        print(options, ListApiKeysResponseSchema, create(ListApiKeysResponseSchema, { apiKeys }), () =>
          printTable(
            ["ID", "PREFIX", "CREATED", "LAST USED", "REVOKED"],
            apiKeys.map((k) => [
              k.id,
              `${k.prefix}...`,
              k.createdAt,
              k.lastUsedAt ?? "-",
              k.revokedAt ?? "-",
            ]),
          ),
        );
      }),
    );
  apikey
    .command("revoke")
    .description("revoke an API key")
    .argument("<keyId>")
    .option("--json", "print JSON")
    .action(
      run(async (accounts, _config, keyId: string, options: JsonOption) => {
        const key = apiKeyMessage(await accounts.revokeApiKey(keyId));
        print(options, ApiKeySchema, key, () =>
          console.log(`revoked ${key.id} (${key.prefix}...) at ${key.revokedAt}`),
        );
      }),
    );
}

/** Each account command runs through withContext: refusals exit with 2, the store is closed after. */
function actionRunner(openContext: () => AccountsContext | Promise<AccountsContext>) {
  return <A extends unknown[]>(action: Action<A>) =>
    (...args: A): Promise<void> =>
      withContext(openContext, ({ config, store }) =>
        action(new AccountsService(store.accounts), config, ...args),
      );
}

function printBootstrap(created: Bootstrapped, publicBaseUrl: string, options: JsonOption): void {
  const { user, workspace, apiKey } = created;
  const url = `${publicBaseUrl}/api/v1/logs?workspaceId=${encodeURIComponent(workspace.id)}`;
  const curl = `curl -H 'x-api-key: ${apiKey.key}' '${url}'`;
  if (options.json) {
    console.log(
      JSON.stringify({
        user: jsonOf(UserSchema, userMessage(user)),
        workspace: jsonOf(WorkspaceSchema, workspaceMessage(workspace)),
        apiKey: jsonOf(ApiKeySchema, apiKeyMessage(apiKey.record)),
        key: apiKey.key,
        curl,
      }),
    );
    return;
  }
  console.log(`user       ${user.id}  ${user.email} (plan ${user.plan})`);
  console.log(`workspace  ${workspace.id}  ${workspace.name}`);
  console.log(`API key    ${apiKey.record.id}  ${apiKey.key}`);
  console.log("\nThe API key is shown this once: store it now. Try it:\n");
  console.log(`  ${curl}`);
}

function printUsers(users: User[]): void {
  printTable(
    ["ID", "EMAIL", "PLAN", "CREATED"],
    users.map((u) => [u.id, u.email, u.plan, u.createdAt]),
  );
}

function printWorkspaces(workspaces: Workspace[]): void {
  printTable(
    ["ID", "NAME", "MEMBERS", "CREATED"],
    workspaces.map((w) => [w.id, w.name, w.memberUserIds.join(",") || "-", w.createdAt]),
  );
}

function printTable(header: string[], rows: string[][]): void {
  const lines = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...lines.map((line) => line[i]?.length ?? 0)));
  for (const line of lines) {
    console.log(
      line
        .map((value, i) => value.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    );
  }
}

/** `--json` prints the message as the API would return it; otherwise `human` prints for people. */
function print<D extends DescMessage>(
  options: JsonOption,
  schema: D,
  message: MessageShape<D>,
  human: () => void,
): void {
  if (options.json) console.log(JSON.stringify(jsonOf(schema, message)));
  else human();
}

/** The server's JSON options (always emit implicit values, D7), so the CLI prints what the API returns. */
function jsonOf<D extends DescMessage>(schema: D, message: MessageShape<D>): Record<string, unknown> {
  return toJson(schema, message, { alwaysEmitImplicit: true }) as Record<string, unknown>;
}
