import { type AccountsStore, type ApiKeyRow, type KeyOwner, toApiKey } from "../accounts-store.js";
import type { ApiKeyRecord, Plan, UserRecord, WorkspaceRecord } from "../records.js";
import type { StoreArea } from "../store.js";
import { type PostgresPool, withTransaction } from "./database.js";

const userColumns = `id, email, plan, created_at AS "createdAt"`;
const workspaceColumns = `id, name, created_at AS "createdAt"`;

/**
 * Users, workspaces, memberships and API keys on PostgreSQL (D5, D6, D32): SQLite's AccountsStore, as
 * promises. Unlike SQLite's, it keeps no cache of keys and memberships: nothing tells one machine, at no
 * cost, that another committed a change, and a revoked key or a removed member must be refused from the
 * first request after the change commits, on every machine. Both reads are one index lookup each.
 */
export class PostgresAccountsStore implements StoreArea<AccountsStore> {
  constructor(private readonly pool: PostgresPool) {}

  async createUser(user: UserRecord): Promise<void> {
    await this.pool.query("INSERT INTO users (id, email, plan, created_at) VALUES ($1, $2, $3, $4)", [
      user.id,
      user.email,
      user.plan,
      user.createdAt,
    ]);
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    const { rows } = await this.pool.query<UserRecord>(`SELECT ${userColumns} FROM users WHERE id = $1`, [
      id,
    ]);
    return rows[0];
  }

  async listUsers(): Promise<UserRecord[]> {
    return (await this.pool.query<UserRecord>(`SELECT ${userColumns} FROM users ORDER BY created_at, id`))
      .rows;
  }

  async createWorkspace(workspace: WorkspaceRecord, memberUserIds: string[]): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      await client.query("INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)", [
        workspace.id,
        workspace.name,
        workspace.createdAt,
      ]);
      if (memberUserIds.length === 0) return;
      await client.query(
        `INSERT INTO memberships (user_id, workspace_id) SELECT unnest($1::text[]), $2
         ON CONFLICT DO NOTHING`,
        [memberUserIds, workspace.id],
      );
    });
  }

  async getWorkspace(id: string): Promise<WorkspaceRecord | undefined> {
    const { rows } = await this.pool.query<WorkspaceRecord>(
      `SELECT ${workspaceColumns} FROM workspaces WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  async listWorkspaces(userId?: string): Promise<WorkspaceRecord[]> {
    const { rows } =
      userId === undefined
        ? await this.pool.query<WorkspaceRecord>(
            `SELECT ${workspaceColumns} FROM workspaces ORDER BY created_at, id`,
          )
        : await this.pool.query<WorkspaceRecord>(
            `SELECT w.id, w.name, w.created_at AS "createdAt"
             FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
             WHERE m.user_id = $1 ORDER BY w.created_at, w.id`,
            [userId],
          );
    return rows;
  }

  async addMember(workspaceId: string, userId: string): Promise<void> {
    await this.pool.query(
      "INSERT INTO memberships (user_id, workspace_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
      [userId, workspaceId],
    );
  }

  /** Asked every time: this store caches nothing. */
  async isMember(userId: string, workspaceId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "SELECT 1 FROM memberships WHERE user_id = $1 AND workspace_id = $2",
      [userId, workspaceId],
    );
    return (rowCount ?? 0) > 0;
  }

  async membersOf(workspaceId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ user_id: string }>(
      "SELECT user_id FROM memberships WHERE workspace_id = $1 ORDER BY user_id",
      [workspaceId],
    );
    return rows.map((row) => row.user_id);
  }

  async createApiKey(key: Omit<ApiKeyRecord, "lastUsedAt" | "revokedAt">, hash: Buffer): Promise<void> {
    await this.pool.query(
      "INSERT INTO api_keys (id, user_id, prefix, hash, created_at) VALUES ($1, $2, $3, $4, $5)",
      [key.id, key.userId, key.prefix, hash, key.createdAt],
    );
  }

  async listApiKeys(userId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<ApiKeyRow>(
      "SELECT * FROM api_keys WHERE user_id = $1 ORDER BY created_at, id",
      [userId],
    );
    return rows.map(toApiKey);
  }

  async getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.pool.query<ApiKeyRow>("SELECT * FROM api_keys WHERE id = $1", [id]);
    return rows[0] && toApiKey(rows[0]);
  }

  async revokeApiKey(id: string, now: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
      [now, id],
    );
    return (rowCount ?? 0) > 0;
  }

  async ownerOfKeyHash(hash: Buffer): Promise<KeyOwner | undefined> {
    const { rows } = await this.pool.query<UserRecord & { keyId: string }>(
      `SELECT k.id AS "keyId", u.id, u.email, u.plan, u.created_at AS "createdAt"
       FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.hash = $1 AND k.revoked_at IS NULL`,
      [hash],
    );
    const row = rows[0];
    if (!row) return undefined;
    const { keyId, ...user } = row;
    return { keyId, user: { ...user, plan: user.plan as Plan } };
  }

  /** The guard keeps last_used_at from moving backwards, as on SQLite; callers throttle the writes. */
  async touchApiKey(id: string, now: number): Promise<void> {
    await this.pool.query(
      "UPDATE api_keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)",
      [now, id],
    );
  }
}
