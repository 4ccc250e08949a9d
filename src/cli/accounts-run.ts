import { create, type DescMessage, type MessageShape, toJson } from "@bufbuild/protobuf";
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
import { AccountsService, type Bootstrapped } from "../services/accounts/accounts-service.js";
import { apiKeyMessage, userMessage, workspaceMessage } from "../services/accounts/admin-service.js";
import type { CommandContext } from "./context.js";

/*
 * What the account commands do (D6), loaded only when one of them runs: accounts.ts declares them. Each
 * goes through the same AccountsService as the admin RPCs, and `--json` prints the admin API's own JSON.
 */

export interface JsonOption {
  json?: boolean;
}

export async function bootstrap(
  { store, config }: CommandContext,
  options: { plan: string; email?: string; workspaceName: string } & JsonOption,
): Promise<void> {
  const created = await accountsOf(store).bootstrap(options);
  printBootstrap(created, config.publicBaseUrl, options);
}

export async function createUser(
  { store }: CommandContext,
  options: { email: string; plan: string } & JsonOption,
): Promise<void> {
  const created = userMessage(await accountsOf(store).createUser(options.email, options.plan));
  print(options, UserSchema, created, () => printUsers([created]));
}

export async function listUsers({ store }: CommandContext, options: JsonOption): Promise<void> {
  const users = (await accountsOf(store).listUsers()).map(userMessage);
  print(options, ListUsersResponseSchema, create(ListUsersResponseSchema, { users }), () =>
    printUsers(users),
  );
}

export async function createWorkspace(
  { store }: CommandContext,
  options: { name: string; member?: string[] } & JsonOption,
): Promise<void> {
  const created = workspaceMessage(await accountsOf(store).createWorkspace(options.name, options.member));
  print(options, WorkspaceSchema, created, () => printWorkspaces([created]));
}

export async function addWorkspaceMember(
  { store }: CommandContext,
  workspaceId: string,
  options: { user: string } & JsonOption,
): Promise<void> {
  const updated = workspaceMessage(await accountsOf(store).addWorkspaceMember(workspaceId, options.user));
  print(options, WorkspaceSchema, updated, () => printWorkspaces([updated]));
}

export async function listWorkspaces(
  { store }: CommandContext,
  options: { user?: string } & JsonOption,
): Promise<void> {
  const workspaces = (await accountsOf(store).listWorkspaces(options.user)).map(workspaceMessage);
  print(options, ListWorkspacesResponseSchema, create(ListWorkspacesResponseSchema, { workspaces }), () =>
    printWorkspaces(workspaces),
  );
}

export async function createApiKey(
  { store }: CommandContext,
  options: { user: string } & JsonOption,
): Promise<void> {
  const { record, key } = await accountsOf(store).createApiKey(options.user);
  const response = create(CreateApiKeyResponseSchema, { apiKey: apiKeyMessage(record), key });
  print(options, CreateApiKeyResponseSchema, response, () =>
    console.log(`API key ${record.id} for ${record.userId} (shown this once: store it now)\n${key}`),
  );
}

export async function listApiKeys(
  { store }: CommandContext,
  options: { user: string } & JsonOption,
): Promise<void> {
  const apiKeys = (await accountsOf(store).listApiKeys(options.user)).map(apiKeyMessage);
  print(options, ListApiKeysResponseSchema, create(ListApiKeysResponseSchema, { apiKeys }), () =>
    printTable(
      ["ID", "PREFIX", "CREATED", "LAST USED", "REVOKED"],
      apiKeys.map((k) => [k.id, `${k.prefix}...`, k.createdAt, k.lastUsedAt ?? "-", k.revokedAt ?? "-"]),
    ),
  );
}

export async function revokeApiKey(
  { store }: CommandContext,
  keyId: string,
  options: JsonOption,
): Promise<void> {
  const key = apiKeyMessage(await accountsOf(store).revokeApiKey(keyId));
  print(options, ApiKeySchema, key, () =>
    console.log(`revoked ${key.id} (${key.prefix}...) at ${key.revokedAt}`),
  );
}

function accountsOf(store: CommandContext["store"]): AccountsService {
  return new AccountsService(store.accounts);
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
