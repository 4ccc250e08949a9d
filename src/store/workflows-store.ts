import type { Db } from "./database.js";
import type { WorkflowRecord } from "./records.js";

export interface FolderRecord {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: number;
}

interface WorkflowRow {
  id: string;
  workspace_id: string;
  folder_id: string | null;
  name: string;
  description: string;
  version: number;
  state_json: string;
  created_at: number;
  updated_at: number;
}

/** Folders and workflow definitions (D13). The workflow runtime issue adds versions and updates. */
export class WorkflowsStore {
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      insertFolder: db.prepare(
        "INSERT INTO folders (id, workspace_id, name, created_at) VALUES (@id, @workspaceId, @name, @createdAt)",
      ),
      insertWorkflow: db.prepare(
        `INSERT INTO workflows (id, workspace_id, folder_id, name, description, version, state_json, created_at, updated_at)
         VALUES (@id, @workspaceId, @folderId, @name, @description, @version, @stateJson, @createdAt, @updatedAt)`,
      ),
      workflowById: db.prepare("SELECT * FROM workflows WHERE id = ?"),
      workflowsOf: db.prepare("SELECT * FROM workflows WHERE workspace_id = ? ORDER BY name, id"),
    };
  }

  createFolder(folder: FolderRecord): void {
    this.statements.insertFolder.run(folder);
  }

  createWorkflow(workflow: WorkflowRecord): void {
    this.statements.insertWorkflow.run({ ...workflow, stateJson: JSON.stringify(workflow.state) });
  }

  getWorkflow(id: string): WorkflowRecord | undefined {
    const row = this.statements.workflowById.get(id) as WorkflowRow | undefined;
    return row && toWorkflow(row);
  }

  listWorkflows(workspaceId: string): WorkflowRecord[] {
    return (this.statements.workflowsOf.all(workspaceId) as WorkflowRow[]).map(toWorkflow);
  }
}

function toWorkflow(row: WorkflowRow): WorkflowRecord {
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
  };
}
