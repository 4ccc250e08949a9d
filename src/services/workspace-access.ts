import { Code, ConnectError } from "@connectrpc/connect";
import type { StoredWorkflowRecord, UserRecord } from "../store/records.js";
import type { Store } from "../store/store.js";

/** D10: a workspace the caller is not a member of is refused the same way whether or not it exists. */
export async function requireMember(store: Store, user: UserRecord, workspaceId: string): Promise<void> {
  if (!(await store.accounts.isMember(user.id, workspaceId))) {
    throw new ConnectError(`no access to workspace ${workspaceId}`, Code.PermissionDenied);
  }
}

/** D10: something outside the caller's workspaces is "not found", never "forbidden": existence is not leaked. */
export async function visibleTo<T>(
  store: Store,
  user: UserRecord,
  found: T | undefined,
  workspaceOf: (found: T) => string,
  what: string,
): Promise<T> {
  if (found === undefined || !(await store.accounts.isMember(user.id, workspaceOf(found)))) {
    throw new ConnectError(`${what} not found`, Code.NotFound);
  }
  return found;
}

/** A workflow the caller may use: in one of their workspaces and not deleted. */
export async function visibleWorkflow(
  store: Store,
  user: UserRecord,
  id: string,
): Promise<StoredWorkflowRecord> {
  const workflow = await store.workflows.getWorkflow(id);
  return visibleTo(
    store,
    user,
    workflow?.deletedAt === null ? workflow : undefined,
    (w) => w.workspaceId,
    `workflow ${id}`,
  );
}
