import { AuthCache } from "./auth-cache.js";
import { type Db, writerWithoutFsync } from "./database.js";
import type { ApiKeyRecord, Plan, UserRecord, WorkspaceRecord } from "./records.js";

/** A row of api_keys, as both stores read it (D32). */
export interface ApiKeyRow {
  id: string;
  user_id: string;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** The caller an API key stands for (D5). */
export interface KeyOwner {
  keyId: string;
  user: UserRecord;
}

/** Users with plans, workspaces and memberships, and API keys stored only as hashes (D5, D6). */
export class AccountsStore {
  private readonly statements;

  private readonly withoutFsync;
  private readonly cache;

  constructor(private readonly db: Db) {
    this.withoutFsync = writerWithoutFsync(db);
    this.cache = new AuthCache(db);
    this.statements = {
      insertUser: db.prepare(
        "INSERT INTO users (id, email, plan, created_at) VALUES (@id, @email, @plan, @createdAt)",
      ),
      userById: db.prepare("SELECT id, email, plan, created_at AS createdAt FROM users WHERE id = ?"),
      users: db.prepare("SELECT id, email, plan, created_at AS createdAt FROM users ORDER BY created_at, id"),
      insertWorkspace: db.prepare(
        "INSERT INTO workspaces (id, name, created_at) VALUES (@id, @name, @createdAt)",
      ),
      workspaceById: db.prepare("SELECT id, name, created_at AS createdAt FROM workspaces WHERE id = ?"),
      workspaces: db.prepare(
        "SELECT id, name, created_at AS createdAt FROM workspaces ORDER BY created_at, id",
      ),
      workspacesOf: db.prepare(
        `SELECT w.id, w.name, w.created_at AS createdAt FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
         WHERE m.user_id = ? ORDER BY w.created_at, w.id`,
      ),
      addMember: db.prepare("INSERT OR IGNORE INTO memberships (user_id, workspace_id) VALUES (?, ?)"),
      isMember: db.prepare("SELECT 1 FROM memberships WHERE user_id = ? AND workspace_id = ?"),
      membersOf: db.prepare("SELECT user_id FROM memberships WHERE workspace_id = ? ORDER BY user_id"),
      insertKey: db.prepare(
        "INSERT INTO api_keys (id, user_id, prefix, hash, created_at) VALUES (@id, @userId, @prefix, @hash, @createdAt)",
      ),
      keysOf: db.prepare("SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, id"),
      keyById: db.prepare("SELECT * FROM api_keys WHERE id = ?"),
      revokeKey: db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"),
      ownerOfHash: db.prepare(
        `SELECT k.id AS keyId, u.id, u.email, u.plan, u.created_at AS createdAt
         FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.hash = ? AND k.revoked_at IS NULL`,
      ),
      touchKey: db.prepare(
        "UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
      ),
    };
  }

  async createUser(user: UserRecord): Promise<void> {
    this.statements.insertUser.run(user);
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    return this.statements.userById.get(id) as UserRecord | undefined;
  }

  async listUsers(): Promise<UserRecord[]> {
    return this.statements.users.all() as UserRecord[];
  }

  async createWorkspace(workspace: WorkspaceRecord, memberUserIds: string[]): Promise<void> {
    this.db.transaction(() => {
      this.statements.insertWorkspace.run(workspace);
      for (const userId of memberUserIds) this.statements.addMember.run(userId, workspace.id);
    })();
    this.cache.clear();
  }

  async getWorkspace(id: string): Promise<WorkspaceRecord | undefined> {
    return this.statements.workspaceById.get(id) as WorkspaceRecord | undefined;
  }

  /** Every workspace, or those the user belongs to. */
  async listWorkspaces(userId?: string): Promise<WorkspaceRecord[]> {
    const rows =
      userId === undefined ? this.statements.workspaces.all() : this.statements.workspacesOf.all(userId);
    return rows as WorkspaceRecord[];
  }

  async addMember(workspaceId: string, userId: string): Promise<void> {
    this.statements.addMember.run(userId, workspaceId);
    this.cache.clear();
  }

  /**
   * Cached (auth-cache.ts): a removed member is refused from the first check after the change commits.
   */
  async isMember(userId: string, workspaceId: string): Promise<boolean> {
    return this.cache.get(
      `member\0${userId}\0${workspaceId}`,
      () => this.statements.isMember.get(userId, workspaceId) !== undefined,
    );
  }

  async membersOf(workspaceId: string): Promise<string[]> {
    return (this.statements.membersOf.all(workspaceId) as { user_id: string }[]).map((r) => r.user_id);
  }

  async createApiKey(key: Omit<ApiKeyRecord, "lastUsedAt" | "revokedAt">, hash: Buffer): Promise<void> {
    this.statements.insertKey.run({ ...key, hash });
  }

  async listApiKeys(userId: string): Promise<ApiKeyRecord[]> {
    return (this.statements.keysOf.all(userId) as ApiKeyRow[]).map(toApiKey);
  }

  async getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    const row = this.statements.keyById.get(id) as ApiKeyRow | undefined;
    return row && toApiKey(row);
  }

  /** Marks the key revoked; false when there is no such key or it was revoked already. */
  async revokeApiKey(id: string, now: number): Promise<boolean> {
    const revoked = this.statements.revokeKey.run(now, id).changes > 0;
    this.cache.clear();
    return revoked;
  }

  /**
   * The live key with this hash and its user, or undefined for an unknown or revoked key. Cached
   * (auth-cache.ts): a revoked key is refused from the first request after the revocation commits.
   */
  async ownerOfKeyHash(hash: Buffer): Promise<KeyOwner | undefined> {
    return this.cache.get(
      `key\0${hash.toString("base64")}`,
      () => {
        const row = this.statements.ownerOfHash.get(hash) as (UserRecord & { keyId: string }) | undefined;
        if (!row) return undefined;
        const { keyId, ...user } = row;
        return { keyId, user: { ...user, plan: user.plan as Plan } };
      },
      (owner) => owner !== undefined,
    );
  }

  /**
   * Records that the key was used. Callers throttle this (a write per request would serialise every
   * request on the writer); the guard keeps last_used_at from moving backwards.
   */
  async touchApiKey(id: string, now: number): Promise<void> {
    // Key bookkeeping commits without an fsync (D23 as amended).
    this.withoutFsync(() => this.statements.touchKey.run(now, id, now));
  }
}

export function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    userId: row.user_id,
    prefix: row.prefix,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}
