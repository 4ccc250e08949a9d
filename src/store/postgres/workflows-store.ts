import type {
  StoredWorkflowRecord,
  WorkflowRecord,
  WorkflowSummaryRecord,
  WorkflowVersionRecord,
} from "../records.js";
import type { StoreArea } from "../store.js";
import { workflowsOverTime } from "../tenant-reads.js";
import {
  type FolderRecord,
  type FolderRow,
  nextVersion,
  toFolder,
  toHead,
  toVersion,
  toWorkflow,
  type VersionRow,
  type WorkflowChanges,
  type WorkflowHead,
  type WorkflowHeadRow,
  type WorkflowRow,
  type WorkflowsStore,
  workflowHeadColumns,
} from "../workflows-store.js";
import { type PostgresPool, type Queryable, withTransaction } from "./database.js";
import { TenantReads } from "./tenant-reads.js";

const insertVersionSql = `INSERT INTO workflow_versions (workflow_id, version, name, description, state_json, created_at)
  VALUES ($1, $2, $3, $4, $5, $6)`;

/**
 * Folders and workflow definitions on PostgreSQL (D13, D32): SQLite's WorkflowsStore, as promises, with
 * its rows. Each save writes the head row and its immutable version in one transaction.
 */
export class PostgresWorkflowsStore implements StoreArea<WorkflowsStore> {
  /** `reads` (D46) defaults to the main pool, for tools and tests that open one pool only. */
  constructor(
    private readonly pool: PostgresPool,
    private readonly reads = TenantReads.on(pool),
  ) {}

  async createFolder(folder: FolderRecord): Promise<void> {
    await this.pool.query(
      "INSERT INTO folders (id, workspace_id, name, created_at) VALUES ($1, $2, $3, $4)",
      [folder.id, folder.workspaceId, folder.name, folder.createdAt],
    );
  }

  async getFolder(id: string): Promise<FolderRecord | undefined> {
    const { rows } = await this.pool.query<FolderRow>("SELECT * FROM folders WHERE id = $1", [id]);
    return rows[0] && toFolder(rows[0]);
  }

  async listFolders(workspaceId: string): Promise<FolderRecord[]> {
    const { rows } = await this.pool.query<FolderRow>(
      "SELECT * FROM folders WHERE workspace_id = $1 ORDER BY name, id",
      [workspaceId],
    );
    return rows.map(toFolder);
  }

  async createWorkflow(workflow: WorkflowRecord): Promise<void> {
    const stateJson = JSON.stringify(workflow.state);
    await withTransaction(this.pool, async (client) => {
      await client.query(
        `INSERT INTO workflows (id, workspace_id, folder_id, name, description, version, state_json, created_at,
           updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          workflow.id,
          workflow.workspaceId,
          workflow.folderId,
          workflow.name,
          workflow.description,
          workflow.version,
          stateJson,
          workflow.createdAt,
          workflow.updatedAt,
        ],
      );
      await insertVersion(client, workflow, stateJson);
    });
  }

  /**
   * Saves the next version and returns it; undefined when the workflow does not exist or was deleted.
   * The head row is locked first, so two machines updating one workflow take turns instead of both
   * writing version n+1.
   */
  async updateWorkflow(
    id: string,
    changes: WorkflowChanges,
    at: number,
  ): Promise<StoredWorkflowRecord | undefined> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<WorkflowRow>("SELECT * FROM workflows WHERE id = $1 FOR UPDATE", [
        id,
      ]);
      const current = rows[0] && toWorkflow(rows[0]);
      if (!current || current.deletedAt !== null) return undefined;
      const next = nextVersion(current, changes, at);
      const stateJson = JSON.stringify(next.state);
      await client.query(
        `UPDATE workflows SET folder_id = $2, name = $3, description = $4, version = $5, state_json = $6,
           updated_at = $7
         WHERE id = $1`,
        [id, next.folderId, next.name, next.description, next.version, stateJson, next.updatedAt],
      );
      await insertVersion(client, next, stateJson);
      return next;
    });
  }

  async deleteWorkflow(id: string, at: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "UPDATE workflows SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL",
      [at, id],
    );
    return (rowCount ?? 0) > 0;
  }

  async getWorkflow(id: string): Promise<StoredWorkflowRecord | undefined> {
    const { rows } = await this.pool.query<WorkflowRow>("SELECT * FROM workflows WHERE id = $1", [id]);
    return rows[0] && toWorkflow(rows[0]);
  }

  async getWorkflowHead(id: string): Promise<WorkflowHead | undefined> {
    const { rows } = await this.pool.query<WorkflowHeadRow>(
      `SELECT ${workflowHeadColumns} FROM workflows WHERE id = $1`,
      [id],
    );
    return rows[0] && toHead(rows[0]);
  }

  async getWorkflowSummaries(ids: readonly string[]): Promise<WorkflowSummaryRecord[]> {
    const { rows } = await this.pool.query<WorkflowSummaryRecord>(
      "SELECT id, name, description FROM workflows WHERE id = ANY($1::text[])",
      [ids],
    );
    return rows;
  }

  async getWorkflowVersion(workflowId: string, version: number): Promise<WorkflowVersionRecord | undefined> {
    const { rows } = await this.pool.query<VersionRow>(
      "SELECT * FROM workflow_versions WHERE workflow_id = $1 AND version = $2",
      [workflowId, version],
    );
    return rows[0] && toVersion(rows[0]);
  }

  async listWorkflows(
    workspaceId: string,
    folderId?: string,
    signal?: AbortSignal,
  ): Promise<StoredWorkflowRecord[]> {
    const { rows } = await this.reads.run(signal, workflowsOverTime, (client) =>
      folderId === undefined
        ? client.query<WorkflowRow>(
            "SELECT * FROM workflows WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY name, id",
            [workspaceId],
          )
        : client.query<WorkflowRow>(
            `SELECT * FROM workflows WHERE workspace_id = $1 AND folder_id = $2 AND deleted_at IS NULL
             ORDER BY name, id`,
            [workspaceId, folderId],
          ),
    );
    return rows.map(toWorkflow);
  }
}

function insertVersion(db: Queryable, workflow: WorkflowRecord, stateJson: string) {
  return db.query(insertVersionSql, [
    workflow.id,
    workflow.version,
    workflow.name,
    workflow.description,
    stateJson,
    workflow.updatedAt,
  ]);
}
