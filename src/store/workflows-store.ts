import type { Db } from "./database.js";
import type {
  StoredWorkflowRecord,
  WorkflowRecord,
  WorkflowSummaryRecord,
  WorkflowVersionRecord,
} from "./records.js";

export interface FolderRecord {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: number;
}

/** What an update changes: a field left out keeps its value; folderId null moves to the top level. */
export interface WorkflowChanges {
  name?: string;
  description?: string;
  folderId?: string | null;
  /** Protobuf JSON of flowlog.workflows.v1.WorkflowState. */
  state?: unknown;
}

export interface WorkflowRow {
  id: string;
  workspace_id: string;
  folder_id: string | null;
  name: string;
  description: string;
  version: number;
  state_json: string;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface VersionRow {
  workflow_id: string;
  version: number;
  name: string;
  description: string;
  state_json: string;
  created_at: number;
}

/**
 * A workflow's head without its graph: where it lives and which version is current. What a worker checks
 * every start against (issue 49), read without the state that the start already carries (issue 12).
 */
export type WorkflowHead = Pick<
  StoredWorkflowRecord,
  "id" | "workspaceId" | "folderId" | "version" | "deletedAt"
>;

export type WorkflowHeadRow = Pick<
  WorkflowRow,
  "id" | "workspace_id" | "folder_id" | "version" | "deleted_at"
>;

/** The head row's columns, for both stores' one query. */
export const workflowHeadColumns = "id, workspace_id, folder_id, version, deleted_at";

export interface FolderRow {
  id: string;
  workspace_id: string;
  name: string;
  created_at: number;
}

/**
 * Folders and workflow definitions (D13). Each save writes the head row and an immutable version row in
 * one transaction, so the version an execution snapshots is always there to read.
 */
export class WorkflowsStore {
  private readonly statements;
  private readonly transactions;

  constructor(db: Db) {
    this.statements = {
      insertFolder: db.prepare(
        "INSERT INTO folders (id, workspace_id, name, created_at) VALUES (@id, @workspaceId, @name, @createdAt)",
      ),
      folderById: db.prepare("SELECT * FROM folders WHERE id = ?"),
      foldersOf: db.prepare("SELECT * FROM folders WHERE workspace_id = ? ORDER BY name, id"),
      insertWorkflow: db.prepare(
        `INSERT INTO workflows (id, workspace_id, folder_id, name, description, version, state_json, created_at, updated_at)
         VALUES (@id, @workspaceId, @folderId, @name, @description, @version, @stateJson, @createdAt, @updatedAt)`,
      ),
      updateWorkflow: db.prepare(
        `UPDATE workflows SET folder_id = @folderId, name = @name, description = @description, version = @version,
           state_json = @stateJson, updated_at = @updatedAt
         WHERE id = @id`,
      ),
      insertVersion: db.prepare(
        `INSERT INTO workflow_versions (workflow_id, version, name, description, state_json, created_at)
         VALUES (@id, @version, @name, @description, @stateJson, @updatedAt)`,
      ),
      deleteWorkflow: db.prepare("UPDATE workflows SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL"),
      workflowById: db.prepare("SELECT * FROM workflows WHERE id = ?"),
      headById: db.prepare(`SELECT ${workflowHeadColumns} FROM workflows WHERE id = ?`),
      summaries: db.prepare(
        "SELECT id, name, description FROM workflows WHERE id IN (SELECT value FROM json_each(?))",
      ),
      workflowsOf: db.prepare(
        "SELECT * FROM workflows WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY name, id",
      ),
      workflowsInFolder: db.prepare(
        "SELECT * FROM workflows WHERE workspace_id = ? AND folder_id = ? AND deleted_at IS NULL ORDER BY name, id",
      ),
      version: db.prepare("SELECT * FROM workflow_versions WHERE workflow_id = ? AND version = ?"),
    };
    this.transactions = {
      create: db.transaction((workflow: WorkflowRecord) => {
        const row = { ...workflow, stateJson: JSON.stringify(workflow.state) };
        this.statements.insertWorkflow.run(row);
        this.statements.insertVersion.run(row);
      }),
      update: db.transaction((id: string, changes: WorkflowChanges, at: number) => {
        const current = this.readWorkflow(id);
        if (!current || current.deletedAt !== null) return undefined;
        const next = nextVersion(current, changes, at);
        const row = { ...next, stateJson: JSON.stringify(next.state) };
        this.statements.updateWorkflow.run(row);
        this.statements.insertVersion.run(row);
        return next;
      }),
    };
  }

  async createFolder(folder: FolderRecord): Promise<void> {
    this.statements.insertFolder.run(folder);
  }

  async getFolder(id: string): Promise<FolderRecord | undefined> {
    const row = this.statements.folderById.get(id) as FolderRow | undefined;
    return row && toFolder(row);
  }

  async listFolders(workspaceId: string): Promise<FolderRecord[]> {
    return (this.statements.foldersOf.all(workspaceId) as FolderRow[]).map(toFolder);
  }

  /** Writes the workflow and its version `workflow.version` together. */
  async createWorkflow(workflow: WorkflowRecord): Promise<void> {
    this.transactions.create(workflow);
  }

  /**
   * Saves the next version and returns it; undefined when the workflow does not exist or was deleted.
   * Immediate, so two processes updating one workflow take turns instead of both writing version n+1.
   */
  async updateWorkflow(
    id: string,
    changes: WorkflowChanges,
    at: number,
  ): Promise<StoredWorkflowRecord | undefined> {
    return this.transactions.update.immediate(id, changes, at);
  }

  /** Marks the workflow deleted; false when it does not exist or already was. */
  async deleteWorkflow(id: string, at: number): Promise<boolean> {
    return this.statements.deleteWorkflow.run(at, id).changes > 0;
  }

  /** The current version, deleted workflows included: logs keep showing the workflow they ran. */
  async getWorkflow(id: string): Promise<StoredWorkflowRecord | undefined> {
    return this.readWorkflow(id);
  }

  /** The head alone, deleted workflows included: the graph stays unread. */
  async getWorkflowHead(id: string): Promise<WorkflowHead | undefined> {
    const row = this.statements.headById.get(id) as WorkflowHeadRow | undefined;
    return row && toHead(row);
  }

  /**
   * The names of these workflows, deleted ones included, in no order; unknown ids are left out. What the
   * logs API shows of an entry's workflow, read without the graph (issue 13: no work a request does not need).
   */
  async getWorkflowSummaries(ids: readonly string[]): Promise<WorkflowSummaryRecord[]> {
    return this.statements.summaries.all(JSON.stringify(ids)) as WorkflowSummaryRecord[];
  }

  /** One saved version, deleted workflows included: the exact graph an execution ran (D13). */
  async getWorkflowVersion(workflowId: string, version: number): Promise<WorkflowVersionRecord | undefined> {
    const row = this.statements.version.get(workflowId, version) as VersionRow | undefined;
    return row && toVersion(row);
  }

  /**
   * The workspace's workflows that are not deleted, by name; only one folder's when it is given.
   * `signal`, the caller leaving, ends PostgreSQL's read (D46); better-sqlite3 cannot interrupt one.
   */
  async listWorkflows(
    workspaceId: string,
    folderId?: string,
    _signal?: AbortSignal,
  ): Promise<StoredWorkflowRecord[]> {
    const rows =
      folderId === undefined
        ? this.statements.workflowsOf.all(workspaceId)
        : this.statements.workflowsInFolder.all(workspaceId, folderId);
    return (rows as WorkflowRow[]).map(toWorkflow);
  }

  private readWorkflow(id: string): StoredWorkflowRecord | undefined {
    const row = this.statements.workflowById.get(id) as WorkflowRow | undefined;
    return row && toWorkflow(row);
  }
}

export function nextVersion(
  current: StoredWorkflowRecord,
  changes: WorkflowChanges,
  at: number,
): StoredWorkflowRecord {
  return {
    ...current,
    name: changes.name ?? current.name,
    description: changes.description ?? current.description,
    folderId: changes.folderId === undefined ? current.folderId : changes.folderId,
    state: changes.state ?? current.state,
    version: current.version + 1,
    updatedAt: at,
  };
}

export function toWorkflow(row: WorkflowRow): StoredWorkflowRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    folderId: row.folder_id,
    name: row.name,
    description: row.description,
    version: row.version,
    state: JSON.parse(row.state_json),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

export function toHead(row: WorkflowHeadRow): WorkflowHead {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    folderId: row.folder_id,
    version: row.version,
    deletedAt: row.deleted_at,
  };
}

export function toVersion(row: VersionRow): WorkflowVersionRecord {
  return {
    workflowId: row.workflow_id,
    version: row.version,
    name: row.name,
    description: row.description,
    state: JSON.parse(row.state_json),
    createdAt: row.created_at,
  };
}

export function toFolder(row: FolderRow): FolderRecord {
  return { id: row.id, workspaceId: row.workspace_id, name: row.name, createdAt: row.created_at };
}
