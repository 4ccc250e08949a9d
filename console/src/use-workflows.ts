import type { Folder, Workflow } from "../../gen/flowlog/workflows/v1/workflow_pb.js";
import { useSession } from "./context.js";
import { type CallState, useCall } from "./use-call.js";

export interface WorkspaceCatalog {
  workflows: Workflow[];
  folders: Folder[];
  /** A workflow's name by its id: log entries in `details=basic` carry the id only. */
  nameOf(workflowId: string): string;
}

/** The workspace's workflows and folders, for filters and for naming what the logs API identifies. */
export function useWorkspaceCatalog(): CallState<WorkspaceCatalog> {
  const { api, workspaceId } = useSession();
  const [state] = useCall(
    async (signal) => {
      const [workflows, folders] = await Promise.all([
        api.workflows.listWorkflows({ workspaceId }, { signal }),
        api.workflows.listFolders({ workspaceId }, { signal }),
      ]);
      const names = new Map(workflows.workflows.map((workflow) => [workflow.id, workflow.name]));
      return {
        workflows: workflows.workflows,
        folders: folders.folders,
        nameOf: (workflowId: string) => names.get(workflowId) ?? workflowId,
      };
    },
    [workspaceId],
  );
  return state;
}
