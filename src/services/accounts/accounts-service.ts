import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { z } from "zod";
import { type FieldViolation, invalidArgument } from "../../errors/api-errors.js";
import { type Plan, plans } from "../../limits/plans.js";
import type { ApiKeyRecord, UserRecord, WorkspaceRecord } from "../../store/records.js";
import type { Store } from "../../store/store.js";
import { newId } from "../../util/ids.js";
import { apiKeyPrefix, generateApiKey, hashApiKey } from "./api-keys.js";
import { defaultPlan, defaultWorkspaceName } from "./defaults.js";

export interface WorkspaceWithMembers extends WorkspaceRecord {
  memberUserIds: string[];
}

/** A new key: `key` is the only time its text exists outside the caller's hands (D5). */
export interface CreatedApiKey {
  record: ApiKeyRecord;
  key: string;
}

export interface BootstrapOptions {
  plan?: string;
  email?: string;
  workspaceName?: string;
}

export interface Bootstrapped {
  user: UserRecord;
  workspace: WorkspaceWithMembers;
  apiKey: CreatedApiKey;
}

const maxNameLength = 200;
const email = z.email();

/**
 * The rules for users, workspaces and API keys (D5, D6), shared by the `flowlog` CLI and the admin
 * RPCs so both refuse the same input with the same message. Every refusal is a ConnectError naming the
 * field; a key's text never appears in one.
 */
export class AccountsService {
  constructor(
    private readonly accounts: Store["accounts"],
    private readonly clock: () => number = Date.now,
  ) {}

  createUser(emailAddress: string, plan?: string): Promise<UserRecord> {
    return this.insertUser(checked((v) => userFields(v, emailAddress, plan)));
  }

  listUsers(): Promise<UserRecord[]> {
    return this.accounts.listUsers();
  }

  async createWorkspace(name: string, memberUserIds: string[] = []): Promise<WorkspaceWithMembers> {
    const fields = checked((v) => workspaceFields(v, name, "name"));
    return this.insertWorkspace(fields.name, await this.existingMembers(memberUserIds, "memberUserIds"));
  }

  /** Every workspace, or those the user belongs to. */
  async listWorkspaces(userId?: string): Promise<WorkspaceWithMembers[]> {
    if (userId) await this.requireUser(userId);
    const workspaces = await this.accounts.listWorkspaces(userId || undefined);
    return Promise.all(workspaces.map((w) => this.withMembers(w)));
  }

  async addWorkspaceMember(workspaceId: string, userId: string): Promise<WorkspaceWithMembers> {
    const workspace = await this.accounts.getWorkspace(workspaceId);
    if (!workspace) throw new ConnectError(`workspace ${workspaceId} does not exist`, Code.NotFound);
    const [member] = await this.existingMembers([userId], "userId");
    if (member) await this.accounts.addMember(workspaceId, member);
    return this.withMembers(workspace);
  }

  async createApiKey(userId: string): Promise<CreatedApiKey> {
    await this.requireUser(userId);
    return this.insertApiKey(userId);
  }

  /** Keys with their prefix only: the hash is the store's, the key was shown once (D5). */
  async listApiKeys(userId: string): Promise<ApiKeyRecord[]> {
    await this.requireUser(userId);
    return this.accounts.listApiKeys(userId);
  }

  /** Revoking is idempotent: a key revoked earlier is returned as it is. */
  async revokeApiKey(id: string): Promise<ApiKeyRecord> {
    const key = await this.accounts.getApiKey(id);
    if (!key) throw new ConnectError(`API key ${id} does not exist`, Code.NotFound);
    if (key.revokedAt !== null) return key;
    await this.accounts.revokeApiKey(id, this.clock());
    return (await this.accounts.getApiKey(id)) ?? key;
  }

  /**
   * D6: a user, a workspace they belong to and a key, for the quick start. Every value is checked
   * before the first write, so a refused bootstrap leaves nothing behind.
   */
  async bootstrap(options: BootstrapOptions = {}): Promise<Bootstrapped> {
    const fields = checked((v) => ({
      ...userFields(v, options.email ?? generatedEmail(), options.plan),
      ...workspaceFields(v, options.workspaceName ?? defaultWorkspaceName, "workspaceName"),
    }));
    const user = await this.insertUser(fields);
    const workspace = await this.insertWorkspace(fields.name, [user.id]);
    return { user, workspace, apiKey: await this.insertApiKey(user.id) };
  }

  private async insertUser(fields: { email: string; plan: Plan }): Promise<UserRecord> {
    const user: UserRecord = { id: newId("usr"), ...fields, createdAt: this.clock() };
    try {
      await this.accounts.createUser(user);
    } catch (error) {
      // users.email is the table's one UNIQUE column; the constraint, not a prior read, decides, so
      // two concurrent creations cannot both succeed.
      if (isUniqueViolation(error)) {
        throw new ConnectError(`a user with email ${user.email} already exists`, Code.AlreadyExists);
      }
      throw error;
    }
    return user;
  }

  private async insertWorkspace(name: string, memberUserIds: string[]): Promise<WorkspaceWithMembers> {
    const workspace: WorkspaceRecord = { id: newId("ws"), name, createdAt: this.clock() };
    await this.accounts.createWorkspace(workspace, memberUserIds);
    return this.withMembers(workspace);
  }

  private async insertApiKey(userId: string): Promise<CreatedApiKey> {
    const key = generateApiKey();
    const record: ApiKeyRecord = {
      id: newId("key"),
      userId,
      prefix: apiKeyPrefix(key),
      createdAt: this.clock(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.accounts.createApiKey(record, hashApiKey(key));
    return { record, key };
  }

  private async withMembers(workspace: WorkspaceRecord): Promise<WorkspaceWithMembers> {
    return { ...workspace, memberUserIds: await this.accounts.membersOf(workspace.id) };
  }

  private async requireUser(userId: string): Promise<UserRecord> {
    const user = await this.accounts.getUser(userId);
    if (!user) throw new ConnectError(`user ${userId} does not exist`, Code.NotFound);
    return user;
  }

  /** The distinct ids, all of existing users, else invalid_argument naming `field` and the unknown ids. */
  private async existingMembers(userIds: string[], field: string): Promise<string[]> {
    const distinct = [...new Set(userIds)];
    const found = await Promise.all(distinct.map((id) => this.accounts.getUser(id)));
    const unknown = distinct.filter((_, index) => found[index] === undefined);
    if (unknown.length > 0) {
      throw invalidArgument([{ field, message: `${field} names no existing user: ${unknown.join(", ")}` }]);
    }
    return distinct;
  }
}

/** Runs validators that push violations, then refuses all of them in one invalid_argument. */
function checked<T>(validate: (violations: FieldViolation[]) => T): T {
  const violations: FieldViolation[] = [];
  const value = validate(violations);
  if (violations.length > 0) throw invalidArgument(violations);
  return value;
}

function userFields(
  violations: FieldViolation[],
  emailAddress: string,
  plan: string | undefined,
): { email: string; plan: Plan } {
  // E-mail addresses are compared case-insensitively in practice; storing one spelling makes the
  // UNIQUE constraint catch `Ada@x.com` beside `ada@x.com`.
  const normalized = emailAddress.trim().toLowerCase();
  if (normalized === "") violations.push({ field: "email", message: "email is required" });
  else if (!email.safeParse(normalized).success) {
    violations.push({ field: "email", message: "email must be an e-mail address such as ada@example.com" });
  }
  const chosen = plan === undefined || plan === "" ? defaultPlan : plan;
  if (!isPlan(chosen)) violations.push({ field: "plan", message: `plan must be one of ${plans.join(", ")}` });
  return { email: normalized, plan: chosen as Plan };
}

function workspaceFields(violations: FieldViolation[], name: string, field: string): { name: string } {
  const trimmed = name.trim();
  if (trimmed === "") violations.push({ field, message: `${field} must not be empty` });
  if (trimmed.length > maxNameLength) {
    violations.push({ field, message: `${field} must be at most ${maxNameLength} characters` });
  }
  return { name: trimmed };
}

function isPlan(value: string): value is Plan {
  return (plans as readonly string[]).includes(value);
}

/** Bootstrap without --email still needs a unique, valid address; nothing is ever sent to it. */
function generatedEmail(): string {
  return `bootstrap-${randomBytes(4).toString("hex")}@flowlog.local`;
}

/** SQLite's code, or PostgreSQL's SQLSTATE unique_violation (D32). */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "23505";
}
