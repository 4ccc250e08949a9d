import type { Workflow } from "../../../gen/flowlog/workflows/v1/workflow_pb.js";
import { useSession } from "../context.js";
import { formatTime } from "../format.js";
import { navigate, type Route, routeHref } from "../router.js";
import { CallError } from "../use-call.js";
import { useWorkspaceCatalog, type WorkspaceCatalog } from "../use-workflows.js";
import { RunWorkflow } from "../workflow-run.js";

/** The folder filter's value for workflows kept at the top level, outside every folder. */
const noFolder = "none";

/**
 * Issue 17's workflows: the workspace's list (`#/workflows?folder=…`), and one workflow with its run form
 * (`#/workflows/<id>`). ListWorkflows answers the whole workspace in one page and the folders' names are
 * needed anyway, so the folder filter works on that answer and costs no API call per change.
 */
export function WorkflowsPage({ route }: { route: Route }) {
  const catalog = useWorkspaceCatalog();
  return (
    <>
      <CallError state={catalog} />
      {route.id ? (
        <WorkflowView id={route.id} catalog={catalog.value} />
      ) : (
        <WorkflowList folder={route.params.get("folder") ?? ""} catalog={catalog.value} />
      )}
    </>
  );
}

function WorkflowList({ folder, catalog }: { folder: string; catalog: WorkspaceCatalog | undefined }) {
  const { workspaceId } = useSession();
  const workflows = catalog?.workflows ?? [];
  const shown = folder
    ? workflows.filter((workflow) => (workflow.folderId ?? noFolder) === folder)
    : workflows;
  return (
    <section aria-labelledby="workflows-title">
      <h1 id="workflows-title">Workflows</h1>
      <p class="toolbar">
        <label class="inline">
          Folder
          <select
            value={folder}
            onChange={(event) =>
              navigate(
                routeHref("workflows", undefined, { ws: workspaceId, folder: event.currentTarget.value }),
                {
                  replace: true,
                },
              )
            }
          >
            <option value="">All folders</option>
            <option value={noFolder}>No folder</option>
            {catalog?.folders.map((each) => (
              <option key={each.id} value={each.id}>
                {each.name}
              </option>
            ))}
          </select>
        </label>
      </p>
      <table class="workflows" aria-busy={!catalog}>
        <caption class="visually-hidden">Workflows</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Folder</th>
            <th scope="col">Description</th>
            <th scope="col" class="number">
              Version
            </th>
            <th scope="col">Updated</th>
            <th scope="col">Logs</th>
          </tr>
        </thead>
        <tbody>
          {catalog && shown.length === 0 && (
            <tr>
              <td colSpan={6}>
                {folder ? "No workflows in this folder." : "No workflows in this workspace."}
              </td>
            </tr>
          )}
          {shown.map((workflow) => (
            <tr key={workflow.id}>
              <td>
                <a href={routeHref("workflows", workflow.id, { ws: workspaceId })}>{workflow.name}</a>
              </td>
              <td>{folderName(catalog, workflow)}</td>
              <td class="description">{workflow.description}</td>
              <td class="number">{workflow.version}</td>
              <td title={workflow.updatedAt}>{formatTime(workflow.updatedAt)}</td>
              <td>
                <LogsLink workflow={workflow} inList />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** One workflow's facts and its run form. */
function WorkflowView({ id, catalog }: { id: string; catalog: WorkspaceCatalog | undefined }) {
  const { workspaceId } = useSession();
  const workflow = catalog?.workflows.find((each) => each.id === id);
  const back = (
    <p>
      <a href={routeHref("workflows", undefined, { ws: workspaceId })}>All workflows</a>
    </p>
  );
  if (!workflow)
    return (
      <section aria-labelledby="workflow-title">
        {back}
        <h1 id="workflow-title">Workflow</h1>
        {catalog && (
          <p>
            There is no workflow <code>{id}</code> in this workspace.
          </p>
        )}
      </section>
    );
  return (
    <section aria-labelledby="workflow-title">
      {back}
      <h1 id="workflow-title">{workflow.name}</h1>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{workflow.id}</code>
        </dd>
        <dt>Folder</dt>
        <dd>{folderName(catalog, workflow)}</dd>
        <dt>Description</dt>
        <dd>{workflow.description || "–"}</dd>
        <dt>Version</dt>
        <dd>{workflow.version} (runs use the current version)</dd>
        <dt>Updated</dt>
        <dd title={workflow.updatedAt}>{formatTime(workflow.updatedAt)}</dd>
        <dt>Logs</dt>
        <dd>
          <LogsLink workflow={workflow} />
        </dd>
      </dl>
      <RunWorkflow key={workflow.id} workflow={workflow} />
    </section>
  );
}

/** The logs page filtered to the workflow; in the list, where every row says "Logs", named by the workflow. */
function LogsLink({ workflow, inList = false }: { workflow: Workflow; inList?: boolean }) {
  const { workspaceId } = useSession();
  return (
    <a
      href={routeHref("logs", undefined, { ws: workspaceId, workflows: workflow.id })}
      aria-label={inList ? `Logs of ${workflow.name}` : undefined}
    >
      {inList ? "Logs" : "Logs of this workflow"}
    </a>
  );
}

function folderName(catalog: WorkspaceCatalog | undefined, workflow: Workflow): string {
  if (!workflow.folderId) return "–";
  return catalog?.folders.find((folder) => folder.id === workflow.folderId)?.name ?? workflow.folderId;
}
