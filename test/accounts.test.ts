import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminService } from "../gen/flowlog/admin/v1/admin_service_pb.js";
import { fieldViolations } from "../src/errors/api-errors.js";
import { AccountsService } from "../src/services/accounts/accounts-service.js";
import { hashApiKey, looksLikeApiKey } from "../src/services/accounts/api-keys.js";
import { checkOperatorToken } from "../src/services/accounts/operator-token.js";
import { openStore, type Store } from "../src/store/store.js";
import { refusal, rest, rpcClients } from "./support/api-server.js";
import { operatorToken, startFlowlog, type TestFlowlog } from "./support/flowlog.js";

const isoTimestamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const asOperator = { authorization: `Bearer ${operatorToken}`, "content-type": "application/json" };

function freshDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), "flowlog-accounts-"));
}

/** Every byte SQLite keeps for the store: the database file and any WAL beside it. */
function storedBytes(dataDir: string): Buffer {
  const files = readdirSync(dataDir).filter((name) => name.startsWith("flowlog.sqlite"));
  return Buffer.concat(files.map((name) => readFileSync(path.join(dataDir, name))));
}

describe("accounts and keys (D5, D6)", () => {
  let dataDir: string;
  let store: Store;
  let accounts: AccountsService;
  beforeAll(() => {
    dataDir = freshDataDir();
    store = openStore({ dataDir });
    accounts = new AccountsService(store.accounts);
  });
  afterAll(() => store.close());

  it("bootstrap creates a user, a workspace they belong to and a key that authenticates them", async () => {
    const { user, workspace, apiKey } = await accounts.bootstrap({ plan: "pro", email: "Ada@Example.com" });
    expect(user).toMatchObject({ email: "ada@example.com", plan: "pro" });
    expect(workspace).toMatchObject({ name: "Default workspace", memberUserIds: [user.id] });
    expect(looksLikeApiKey(apiKey.key)).toBe(true);
    expect(apiKey.record).toMatchObject({
      userId: user.id,
      prefix: apiKey.key.slice(0, 12),
      revokedAt: null,
    });
    expect((await store.accounts.ownerOfKeyHash(hashApiKey(apiKey.key)))?.user.id).toBe(user.id);
    expect(await store.accounts.isMember(user.id, workspace.id)).toBe(true);
  });

  it("bootstrap defaults to the free plan and a generated address", async () => {
    const { user } = await accounts.bootstrap();
    expect(user.plan).toBe("free");
    expect(user.email).toMatch(/^bootstrap-[0-9a-f]+@flowlog\.local$/);
  });

  it("stores only the key's SHA-256 hash, never the key", async () => {
    const dir = freshDataDir();
    const own = openStore({ dataDir: dir });
    const { apiKey } = await new AccountsService(own.accounts).bootstrap();
    await own.close();
    const bytes = storedBytes(dir);
    expect(bytes.includes(hashApiKey(apiKey.key))).toBe(true);
    expect(bytes.includes(apiKey.key)).toBe(false);
    expect(bytes.includes(apiKey.key.slice(12))).toBe(false);
  });

  it("lists a user's keys by prefix only", async () => {
    const { user, apiKey } = await accounts.bootstrap();
    const second = await accounts.createApiKey(user.id);
    const listed = await accounts.listApiKeys(user.id);
    expect(listed).toEqual(expect.arrayContaining([apiKey.record, second.record]));
    expect(listed).toHaveLength(2);
    expect(JSON.stringify(listed)).not.toContain(apiKey.key);
    expect(JSON.stringify(listed)).not.toContain(second.key);
  });

  it("a revoked key no longer authenticates, and revoking again changes nothing", async () => {
    const { apiKey } = await accounts.bootstrap();
    const revoked = await accounts.revokeApiKey(apiKey.record.id);
    expect(revoked.revokedAt).toEqual(expect.any(Number));
    expect(await store.accounts.ownerOfKeyHash(hashApiKey(apiKey.key))).toBeUndefined();
    expect(await accounts.revokeApiKey(apiKey.record.id)).toEqual(revoked);
  });

  it("revoking an unknown key is not_found", async () => {
    const error = await refusal(async () => await accounts.revokeApiKey("key_missing"));
    expect(error.code).toBe(Code.NotFound);
    expect(error.rawMessage).toBe("API key key_missing does not exist");
  });

  it("a second user with the same e-mail, in any case, is already_exists", async () => {
    await accounts.createUser("grace@example.com");
    const error = await refusal(async () => await accounts.createUser("GRACE@example.com", "team"));
    expect(error.code).toBe(Code.AlreadyExists);
    expect(error.rawMessage).toContain("grace@example.com");
  });

  it("an unknown plan is invalid_argument naming plan", async () => {
    const error = await refusal(async () => await accounts.createUser("linus@example.com", "gold"));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(fieldViolations(error)).toEqual([
      { field: "plan", message: "plan must be one of free, pro, team, enterprise" },
    ]);
  });

  it("every bad field is named at once", async () => {
    const error = await refusal(async () => await accounts.createUser("not an address", "gold"));
    expect(fieldViolations(error).map((v) => v.field)).toEqual(["email", "plan"]);
  });

  it("a refused bootstrap leaves nothing behind", async () => {
    const users = (await accounts.listUsers()).length;
    const workspaces = (await accounts.listWorkspaces()).length;
    const error = await refusal(async () => await accounts.bootstrap({ plan: "gold", workspaceName: " " }));
    expect(fieldViolations(error).map((v) => v.field)).toEqual(["plan", "workspaceName"]);
    expect(await accounts.listUsers()).toHaveLength(users);
    expect(await accounts.listWorkspaces()).toHaveLength(workspaces);
  });

  it("a workspace's members must exist", async () => {
    const { user } = await accounts.bootstrap();
    const error = await refusal(async () => await accounts.createWorkspace("Team", [user.id, "usr_ghost"]));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(fieldViolations(error)).toEqual([
      { field: "memberUserIds", message: "memberUserIds names no existing user: usr_ghost" },
    ]);
  });

  it("workspaces are listed per member", async () => {
    const { user, workspace } = await accounts.bootstrap();
    const other = await accounts.createWorkspace("Shared", []);
    expect((await accounts.listWorkspaces(user.id)).map((w) => w.id)).toEqual([workspace.id]);
    await accounts.addWorkspaceMember(other.id, user.id);
    expect((await accounts.listWorkspaces(user.id)).map((w) => w.id).sort()).toEqual(
      [workspace.id, other.id].sort(),
    );
    expect((await refusal(async () => await accounts.listWorkspaces("usr_ghost"))).code).toBe(Code.NotFound);
  });

  it("keys of an unknown user are not_found", async () => {
    expect((await refusal(async () => await accounts.createApiKey("usr_ghost"))).code).toBe(Code.NotFound);
    expect((await refusal(async () => await accounts.listApiKeys("usr_ghost"))).code).toBe(Code.NotFound);
  });
});

describe("the admin API (flowlog.admin.v1)", () => {
  let api: TestFlowlog;
  beforeAll(async () => {
    api = await startFlowlog();
  });
  afterAll(() => api.close());

  const post = (url: string, body: unknown, headers: Record<string, string> = asOperator) =>
    rest(api.server.url, url, { method: "POST", headers, body: JSON.stringify(body) });

  it("answers only the operator token: 401 without it, even for a user's API key", async () => {
    const { apiKey } = await new AccountsService(api.store.accounts).bootstrap();
    const json = { "content-type": "application/json" };
    const attempts: Record<string, string>[] = [
      {},
      { "x-api-key": apiKey.key },
      { authorization: `Bearer ${apiKey.key}` },
    ];
    for (const credentials of attempts) {
      const response = await post(
        "/api/v1/admin/users",
        { email: "intruder@example.com" },
        { ...json, ...credentials },
      );
      expect(response.status).toBe(401);
      expect(response.json).toMatchObject({ code: "unauthenticated" });
    }
  });

  it("creates users over gRPC, gRPC-Web and Connect", async () => {
    for (const [name, client] of rpcClients(AdminService, api.server.url)) {
      const email = `${name.replace(/\W+/g, "-").toLowerCase()}@example.com`;
      const { user } = await client.createUser({ email }, { headers: asOperator });
      expect(user).toMatchObject({ email, plan: "free", id: expect.stringMatching(/^usr_/) });
      expect(user?.createdAt).toMatch(isoTimestamp);
    }
  });

  it("refuses bad input over REST as problem+json naming each field", async () => {
    const response = await post("/api/v1/admin/users", { email: "nope", plan: "gold" });
    expect(response.status).toBe(400);
    expect(response.headers["content-type"]).toContain("application/problem+json");
    expect(response.json).toMatchObject({
      code: "invalid_argument",
      errors: [
        { field: "email", message: expect.stringContaining("e-mail address") },
        { field: "plan", message: "plan must be one of free, pro, team, enterprise" },
      ],
    });
  });

  it("refuses a missing required field before the service runs", async () => {
    const response = await post("/api/v1/admin/users", { plan: "pro" });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ errors: [{ field: "email", message: "email is required" }] });
  });

  it("answers a duplicate e-mail with 409", async () => {
    await post("/api/v1/admin/users", { email: "dup@example.com" });
    const response = await post("/api/v1/admin/users", { email: "dup@example.com" });
    expect(response.status).toBe(409);
    expect(response.json).toMatchObject({ code: "already_exists" });
  });

  it("creates a workspace, adds a member and lists it per user", async () => {
    const user = ((await post("/api/v1/admin/users", { email: "member@example.com" })).json as UserBody).user;
    const created = await post("/api/v1/admin/workspaces", { name: "Ops", memberUserIds: [] });
    const workspaceId = (created.json as { workspace: { id: string } }).workspace.id;
    const added = await post(`/api/v1/admin/workspaces/${workspaceId}/members`, { userId: user.id });
    expect(added.json).toMatchObject({ workspace: { id: workspaceId, memberUserIds: [user.id] } });
    const listed = await rest(api.server.url, `/api/v1/admin/workspaces?userId=${user.id}`, {
      headers: asOperator,
    });
    expect(listed.json).toMatchObject({ workspaces: [{ id: workspaceId, name: "Ops" }] });
    const unknown = await post("/api/v1/admin/workspaces", { name: "Ghosts", memberUserIds: ["usr_ghost"] });
    expect(unknown.json).toMatchObject({ status: 400, errors: [{ field: "memberUserIds" }] });
  });

  it("shows a key once, lists it by prefix with its last use, and revokes it", async () => {
    const user = ((await post("/api/v1/admin/users", { email: "keys@example.com" })).json as UserBody).user;
    const workspace = await post("/api/v1/admin/workspaces", { name: "Keys", memberUserIds: [user.id] });
    const logsPath = `/api/v1/logs?workspaceId=${(workspace.json as { workspace: { id: string } }).workspace.id}`;
    const created = await post(`/api/v1/admin/users/${user.id}/api-keys`, {});
    const { apiKey, key } = created.json as { apiKey: { id: string; prefix: string }; key: string };
    expect(looksLikeApiKey(key)).toBe(true);
    expect(apiKey.prefix).toBe(key.slice(0, 12));
    expect((await rest(api.server.url, logsPath, { headers: { "x-api-key": key } })).status).toBe(200);

    const listed = await rest(api.server.url, `/api/v1/admin/users/${user.id}/api-keys`, {
      headers: asOperator,
    });
    expect(listed.text).not.toContain(key);
    expect(listed.json).toEqual({
      apiKeys: [
        {
          id: apiKey.id,
          userId: user.id,
          prefix: apiKey.prefix,
          createdAt: expect.stringMatching(isoTimestamp),
          lastUsedAt: expect.stringMatching(isoTimestamp),
        },
      ],
    });

    const revoked = await rest(api.server.url, `/api/v1/admin/api-keys/${apiKey.id}`, {
      method: "DELETE",
      headers: asOperator,
    });
    expect(revoked.status).toBe(200);
    expect((revoked.json as { apiKey: { revokedAt: string } }).apiKey.revokedAt).toMatch(isoTimestamp);
    expect((await rest(api.server.url, logsPath, { headers: { "x-api-key": key } })).status).toBe(401);

    const missing = await rest(api.server.url, "/api/v1/admin/api-keys/key_missing", {
      method: "DELETE",
      headers: asOperator,
    });
    expect(missing.status).toBe(404);
  });
});

interface UserBody {
  user: { id: string };
}

describe("the operator token guards the admin API", () => {
  it("passes the configured token", () => {
    expect(() => checkOperatorToken(`Bearer ${operatorToken}`, operatorToken)).not.toThrow();
    expect(() => checkOperatorToken(`bearer  ${operatorToken}`, operatorToken)).not.toThrow();
  });

  it.each([
    ["no header", null],
    ["another token", "Bearer test-operator-token-0123456788"],
    ["a prefix of the token", `Bearer ${operatorToken.slice(0, 20)}`],
    ["another scheme", `Basic ${operatorToken}`],
    ["no token after the scheme", "Bearer "],
  ])("refuses %s as unauthenticated", async (_, authorization) => {
    const error = await refusal(() => checkOperatorToken(authorization, operatorToken));
    expect(error.code).toBe(Code.Unauthenticated);
    expect(error.rawMessage).not.toContain(operatorToken);
  });

  it("is permission_denied, naming the variable, while no token is configured", async () => {
    const error = await refusal(() => checkOperatorToken(`Bearer ${operatorToken}`, undefined));
    expect(error.code).toBe(Code.PermissionDenied);
    expect(error.rawMessage).toBe("the admin API is disabled: set FLOWLOG_OPERATOR_TOKEN");
  });
});

describe("the flowlog CLI manages accounts (D6)", () => {
  const dataDir = freshDataDir();
  const publicBaseUrl = "http://flowlog.test:9000";

  async function flowlog(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = { ...process.env, FLOWLOG_DATA_DIR: dataDir, FLOWLOG_PUBLIC_BASE_URL: publicBaseUrl };
    try {
      const { stdout, stderr } = await promisify(execFile)("node", ["bin/flowlog.js", ...args], { env });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  let bootstrapped: {
    user: { id: string; plan: string };
    workspace: { id: string; memberUserIds: string[] };
    apiKey: { id: string; prefix: string };
    key: string;
    curl: string;
  };
  beforeAll(async () => {
    const { code, stdout } = await flowlog("bootstrap", "--plan", "pro", "--json");
    expect(code).toBe(0);
    bootstrapped = JSON.parse(stdout);
  });

  it("bootstrap --json prints the user, the workspace, the key once and a curl line", () => {
    const { user, workspace, apiKey, key, curl } = bootstrapped;
    expect(user.plan).toBe("pro");
    expect(workspace.memberUserIds).toEqual([user.id]);
    expect(looksLikeApiKey(key)).toBe(true);
    expect(apiKey.prefix).toBe(key.slice(0, 12));
    expect(curl).toBe(
      `curl -H 'x-api-key: ${key}' '${publicBaseUrl}/api/v1/logs?workspaceId=${workspace.id}'`,
    );
  });

  it("the key it printed is live in the data dir's store", async () => {
    const store = openStore({ dataDir });
    try {
      expect((await store.accounts.ownerOfKeyHash(hashApiKey(bootstrapped.key)))?.user.id).toBe(
        bootstrapped.user.id,
      );
    } finally {
      await store.close();
    }
  });

  it("bootstrap without --json prints the key and the curl line for people", async () => {
    const { code, stdout } = await flowlog("bootstrap", "--workspace-name", "Quick start");
    expect(code).toBe(0);
    expect(stdout).toMatch(/API key +key_\S+ +flk_[A-Za-z0-9_-]{43}\n/);
    expect(stdout).toMatch(
      /curl -H 'x-api-key: flk_\S+' 'http:\/\/flowlog\.test:9000\/api\/v1\/logs\?workspaceId=ws_/,
    );
  });

  it("apikey list shows the prefix only", async () => {
    const json = await flowlog("apikey", "list", "--user", bootstrapped.user.id, "--json");
    expect(JSON.parse(json.stdout)).toEqual({
      apiKeys: [
        {
          id: bootstrapped.apiKey.id,
          userId: bootstrapped.user.id,
          prefix: bootstrapped.apiKey.prefix,
          createdAt: expect.stringMatching(isoTimestamp),
        },
      ],
    });
    const table = await flowlog("apikey", "list", "--user", bootstrapped.user.id);
    expect(table.stdout).toContain(`${bootstrapped.apiKey.prefix}...`);
    expect(json.stdout + table.stdout).not.toContain(bootstrapped.key);
  });

  it("apikey revoke revokes the key", async () => {
    const created = await flowlog("apikey", "create", "--user", bootstrapped.user.id, "--json");
    const { apiKey } = JSON.parse(created.stdout) as { apiKey: { id: string } };
    const revoked = await flowlog("apikey", "revoke", apiKey.id);
    expect(revoked).toMatchObject({ code: 0, stdout: expect.stringContaining(`revoked ${apiKey.id}`) });
    const listed = JSON.parse(
      (await flowlog("apikey", "list", "--user", bootstrapped.user.id, "--json")).stdout,
    );
    expect(listed.apiKeys.find((k: { id: string }) => k.id === apiKey.id).revokedAt).toMatch(isoTimestamp);
  });

  it("user, workspace and list commands share the service's rules", async () => {
    const created = await flowlog("user", "create", "--email", "cli@example.com", "--plan", "team", "--json");
    const user = JSON.parse(created.stdout) as { id: string };
    const workspace = await flowlog("workspace", "create", "--name", "CLI", "--member", user.id, "--json");
    expect(JSON.parse(workspace.stdout)).toMatchObject({ name: "CLI", memberUserIds: [user.id] });
    const users = JSON.parse((await flowlog("user", "list", "--json")).stdout) as { users: { id: string }[] };
    expect(users.users.map((u) => u.id)).toContain(user.id);
    const mine = await flowlog("workspace", "list", "--user", user.id);
    expect(mine.stdout).toMatch(/^ID +NAME +MEMBERS +CREATED\nws_\S+ +CLI +usr_/);
  });

  it.each([
    ["a bad plan", ["user", "create", "--email", "x@example.com", "--plan", "gold"], "plan must be one of"],
    ["a duplicate e-mail", ["user", "create", "--email", "cli@example.com"], "already exists"],
    ["an unknown member", ["workspace", "create", "--name", "W", "--member", "usr_ghost"], "usr_ghost"],
    ["an unknown key", ["apikey", "revoke", "key_missing"], "API key key_missing does not exist"],
    ["a missing option", ["apikey", "list"], "--user"],
  ])("%s prints the message and exits with 2, with no stack trace", async (_, args, message) => {
    const { code, stderr } = await flowlog(...args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).not.toMatch(/^\s+at /m);
  });
});
