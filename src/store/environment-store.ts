import { decryptSecret, encryptSecret } from "../security/secrets.js";
import { type Db, writtenRow } from "./database.js";
import type { CappedCreate, EnvironmentVariableRecord } from "./records.js";

/** A row of environment_variables without its value, as both stores read it (D32). */
export interface VariableRow {
  workspace_id: string;
  name: string;
  created_at: number;
  updated_at: number;
}

/**
 * Workspace environment variables (D14), kept only as ciphertext (D24). The API reads names and times;
 * only the engine reads values, through getDecrypted, when it resolves {{NAME}} references.
 */
export class EnvironmentStore {
  private readonly statements;
  private readonly cappedSet;

  constructor(
    db: Db,
    private readonly masterKey: Buffer,
  ) {
    this.statements = {
      upsert: db.prepare(
        `INSERT INTO environment_variables (workspace_id, name, sealed_value, created_at, updated_at)
         VALUES (@workspaceId, @name, @sealedValue, @at, @at)
         ON CONFLICT (workspace_id, name)
         DO UPDATE SET sealed_value = excluded.sealed_value, updated_at = excluded.updated_at
         RETURNING workspace_id, name, created_at, updated_at`,
      ),
      namesOf: db.prepare(
        "SELECT workspace_id, name, created_at, updated_at FROM environment_variables WHERE workspace_id = ? ORDER BY name",
      ),
      sealedOf: db.prepare("SELECT name, sealed_value FROM environment_variables WHERE workspace_id = ?"),
      delete: db.prepare("DELETE FROM environment_variables WHERE workspace_id = ? AND name = ?"),
      exists: db.prepare("SELECT 1 FROM environment_variables WHERE workspace_id = ? AND name = ?").pluck(),
      count: db.prepare("SELECT count(*) FROM environment_variables WHERE workspace_id = ?").pluck(),
    };
    this.cappedSet = db.transaction(
      (row: SealedVariable, max: number): CappedCreate<EnvironmentVariableRecord> => {
        const replaces = this.statements.exists.get(row.workspaceId, row.name) !== undefined;
        const count = this.statements.count.get(row.workspaceId) as number;
        if (!replaces && count >= max) return { full: count };
        return { created: toVariable(writtenRow<VariableRow>(this.statements.upsert, row) as VariableRow) };
      },
    );
  }

  /**
   * Creates the variable or replaces its value. A new name is refused when the workspace already has
   * `max` variables (D26, the API's quota); replacing a value never is. Fixtures leave `max` out.
   */
  async set(
    workspaceId: string,
    name: string,
    value: string,
    at: number,
    max = Number.POSITIVE_INFINITY,
  ): Promise<CappedCreate<EnvironmentVariableRecord>> {
    const sealedValue = encryptSecret(this.masterKey, value, environmentSecretContext(workspaceId, name));
    return this.cappedSet.immediate({ workspaceId, name, sealedValue, at }, max);
  }

  async list(workspaceId: string): Promise<EnvironmentVariableRecord[]> {
    return (this.statements.namesOf.all(workspaceId) as VariableRow[]).map(toVariable);
  }

  /** False when the workspace has no such variable. */
  async delete(workspaceId: string, name: string): Promise<boolean> {
    return this.statements.delete.run(workspaceId, name).changes > 0;
  }

  /** Name to plaintext value, for the engine only: never hand this to a response or a log (D24). */
  async getDecrypted(workspaceId: string): Promise<Record<string, string>> {
    const rows = this.statements.sealedOf.all(workspaceId) as { name: string; sealed_value: Buffer }[];
    return Object.fromEntries(
      rows.map((row) => [
        row.name,
        decryptSecret(this.masterKey, row.sealed_value, environmentSecretContext(workspaceId, row.name)),
      ]),
    );
  }
}

interface SealedVariable {
  workspaceId: string;
  name: string;
  sealedValue: Buffer;
  at: number;
}

/** Binds a ciphertext to its variable: copied to another variable or workspace, it fails to decrypt. */
export function environmentSecretContext(workspaceId: string, name: string): string[] {
  return ["environment", workspaceId, name];
}

export function toVariable(row: VariableRow): EnvironmentVariableRecord {
  return {
    workspaceId: row.workspace_id,
    name: row.name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
