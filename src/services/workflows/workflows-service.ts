import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { WorkflowState } from "../../../gen/flowlog/workflows/v1/workflow_pb.js";
import type { WorkflowsService } from "../../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { type FieldViolation, invalidArgument } from "../../errors/api-errors.js";
import type { Quotas } from "../../limits/quotas.js";
import type { StoredWorkflowRecord } from "../../store/records.js";
import type { Store } from "../../store/store.js";
import { newId } from "../../util/ids.js";
import { callerOf } from "../caller.js";
import { type Member, requireMember, visibleTo, visibleWorkflow } from "../workspace-access.js";
import { createEnvironmentHandlers } from "./environment-handlers.js";
import { validateWorkflowState } from "./validation.js";
import { atVersion, folderView, storedState, workflowView } from "./workflow-view.js";

export interface WorkflowsServiceDependencies {
  store: Store;
  clock: () => number;
  /** What a saved workflow and a workspace may hold (D26): its size and runs, environment variables. */
  quotas: Quotas;
  /** Told of each new workflow: subscriptions to "all workflows" include future ones (D18, D21). */
  onWorkflowCreated?: (workflow: { id: string; workspaceId: string }) => Promise<void>;
  /**
   * Told of each deleted workflow, to end its schedules, webhook and watchers (D31); told again when a
   * deletion that failed half-way is retried.
   */
  onWorkflowDeleted?: (workflow: { id: string; workspaceId: string }) => Promise<void>;
}

type Handlers = Partial<ServiceImpl<typeof WorkflowsService>>;

/**
 * Workflow definitions in folders (D13) and the workspace's environment variables (D14, D24). Every
 * call needs a member of the workspace: 403 for a workspace named in the request, 404 for a workflow
 * outside the caller's workspaces (D10). ExecuteWorkflow and ChatWorkflow belong to the triggers.
 */
export function createWorkflowsService(dependencies: WorkflowsServiceDependencies): Handlers {
  return {
    ...createDefinitionHandlers(dependencies),
    ...createFolderHandlers(dependencies),
    ...createEnvironmentHandlers(dependencies),
  };
}

function createDefinitionHandlers({
  store,
  clock,
  quotas,
  onWorkflowCreated,
  onWorkflowDeleted,
}: WorkflowsServiceDependencies): Handlers {
  /** Every problem of the request at once: the folder and each rule the state breaks. */
  const checked = async (
    workspaceId: string,
    folderId: string | undefined,
    state: WorkflowState | undefined,
  ) => {
    const folder = await folderOf(store, workspaceId, folderId);
    const violations = [...folder.violations, ...(state ? validateWorkflowState(state, quotas) : [])];
    if (violations.length > 0) throw invalidArgument(violations);
    return { folderId: folder.id, state: state && storedState(state) };
  };

  return {
    async createWorkflow(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      const { folderId, state } = await checked(request.workspaceId, request.folderId, request.state);
      const now = clock();
      const workflow = {
        id: newId("wf"),
        workspaceId: request.workspaceId,
        folderId: folderId ?? null,
        name: request.name,
        description: request.description,
        version: 1,
        state,
        createdAt: now,
        updatedAt: now,
      };
      await store.workflows.createWorkflow(workflow);
      await onWorkflowCreated?.(workflow);
      return { workflow: workflowView(workflow) };
    },

    async getWorkflow(request, context) {
      const workflow = await visibleWorkflow(store, callerOf(context.values), request.id);
      if (request.version === undefined) return { workflow: workflowView(workflow) };
      const version = await store.workflows.getWorkflowVersion(workflow.id, request.version);
      if (!version)
        throw new ConnectError(`workflow ${request.id} has no version ${request.version}`, Code.NotFound);
      return { workflow: workflowView(atVersion(workflow, version)) };
    },

    async listWorkflows(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      const { folderId } = await checked(request.workspaceId, request.folderId || undefined, undefined);
      const workflows = await store.workflows.listWorkflows(
        request.workspaceId,
        folderId ?? undefined,
        context.signal,
      );
      return { workflows: workflows.map(workflowView) };
    },

    async updateWorkflow(request, context) {
      const current = await visibleWorkflow(store, callerOf(context.values), request.id);
      const { folderId, state } = await checked(current.workspaceId, request.folderId, request.state);
      const changes = { name: request.name, description: request.description, folderId, state };
      const workflow = await store.workflows.updateWorkflow(current.id, changes, clock());
      // Deleted between the two reads: the same answer as if it had gone before.
      if (!workflow) throw new ConnectError(`workflow ${request.id} not found`, Code.NotFound);
      return { workflow: workflowView(workflow) };
    },

    async deleteWorkflow(request, context) {
      const workflow = await deletableWorkflow(store, callerOf(context.values), request.id);
      await store.workflows.deleteWorkflow(workflow.id, clock());
      await onWorkflowDeleted?.(workflow);
      return {};
    },
  };
}

function createFolderHandlers({ store, clock }: WorkflowsServiceDependencies): Handlers {
  return {
    async createFolder(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      const folder = {
        id: newId("fld"),
        workspaceId: request.workspaceId,
        name: request.name,
        createdAt: clock(),
      };
      await store.workflows.createFolder(folder);
      return { folder: folderView(folder) };
    },

    async listFolders(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      return { folders: (await store.workflows.listFolders(request.workspaceId)).map(folderView) };
    },
  };
}

/**
 * A workflow the caller may delete: a live one, or a deleted one whose schedules are not all ended yet
 * (the deletion failed half-way, D31), so that deleting it again finishes the job. Otherwise a deleted
 * workflow is "not found", like one that never existed.
 */
async function deletableWorkflow(store: Store, member: Member, id: string): Promise<StoredWorkflowRecord> {
  const workflow = await store.workflows.getWorkflow(id);
  if (workflow?.deletedAt == null || (await store.triggers.listSchedules(id)).length === 0) {
    return await visibleWorkflow(store, member, id);
  }
  return await visibleTo(store, member, workflow, (w) => w.workspaceId, `workflow ${id}`);
}

/**
 * The folder a request names: undefined when it names none, null for "" (the top level), else a folder
 * of the workspace. Another workspace's folder gets the same answer as a missing one (D10).
 */
async function folderOf(
  store: Store,
  workspaceId: string,
  folderId: string | undefined,
): Promise<{ id: string | null | undefined; violations: FieldViolation[] }> {
  if (folderId === undefined || folderId === "")
    return { id: folderId === "" ? null : undefined, violations: [] };
  if ((await store.workflows.getFolder(folderId))?.workspaceId === workspaceId)
    return { id: folderId, violations: [] };
  return {
    id: undefined,
    violations: [
      { field: "folderId", message: `folder ${folderId} does not exist in workspace ${workspaceId}` },
    ],
  };
}
