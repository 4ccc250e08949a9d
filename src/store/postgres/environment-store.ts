import { decryptSecret, encryptSecret } from "../../security/secrets.js";
import {
  type EnvironmentStore,
  environmentSecretContext,
  toVariable,
  type VariableRow,
} from "../environment-store.js";
import type { CappedCreate, EnvironmentVariableRecord } from "../records.js";
import type { StoreArea } from "../store.js";
import { type PostgresPool, withTransaction } from "./database.js";

/**
 * Workspace environment variables on PostgreSQL (D14, D24, D32): SQLite's EnvironmentStore, as promises,
 * sealed with the same key and context, so a store copied from SQLite opens here.
 */
export class PostgresEnvironmentStore implements StoreArea<EnvironmentStore> {
  constructor(
    private readonly pool: PostgresPool,
    private readonly masterKey: Buffer,
  ) {}

  /**
   * Creates the variable or replaces its value; a new name is refused at `max` (D26). The workspace row
   * is locked first, so two machines adding names at once count one after the other.
   */
  async set(
    workspaceId: string,
    name: string,
    value: string,
    at: number,
    max = Number.POSITIVE_INFINITY,
  ): Promise<CappedCreate<EnvironmentVariableRecord>> {
    const sealed = encryptSecret(this.masterKey, value, environmentSecretContext(workspaceId, name));
    return withTransaction(this.pool, async (client) => {
      await client.query("SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE", [workspaceId]);
      const { rows: counted } = await client.query<{ count: number; replaces: boolean }>(
        `SELECT count(*)::int AS count, bool_or(name = $2) AS replaces
         FROM environment_variables WHERE workspace_id = $1`,
        [workspaceId, name],
      );
      const { count = 0, replaces = false } = counted[0] ?? {};
      if (!replaces && count >= max) return { full: count };
      const { rows } = await client.query<VariableRow>(
        `INSERT INTO environment_variables (workspace_id, name, sealed_value, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $4)
         ON CONFLICT (workspace_id, name)
         DO UPDATE SET sealed_value = excluded.sealed_value, updated_at = excluded.updated_at
         RETURNING workspace_id, name, created_at, updated_at`,
        [workspaceId, name, sealed, at],
      );
      return { created: toVariable(rows[0] as VariableRow) };
    });
  }

  async list(workspaceId: string): Promise<EnvironmentVariableRecord[]> {
    const { rows } = await this.pool.query<VariableRow>(
      `SELECT workspace_id, name, created_at, updated_at FROM environment_variables
       WHERE workspace_id = $1 ORDER BY name`,
      [workspaceId],
    );
    return rows.map(toVariable);
  }

  async delete(workspaceId: string, name: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "DELETE FROM environment_variables WHERE workspace_id = $1 AND name = $2",
      [workspaceId, name],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Name to plaintext value, for the engine only: never hand this to a response or a log (D24). */
  async getDecrypted(workspaceId: string): Promise<Record<string, string>> {
    const { rows } = await this.pool.query<{ name: string; sealed_value: Buffer }>(
      "SELECT name, sealed_value FROM environment_variables WHERE workspace_id = $1",
      [workspaceId],
    );
    return Object.fromEntries(
      rows.map((row) => [
        row.name,
        decryptSecret(this.masterKey, row.sealed_value, environmentSecretContext(workspaceId, row.name)),
      ]),
    );
  }
}
