import { Code, ConnectError } from "@connectrpc/connect";
import type { StoredWorkflowRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { Caller } from "./caller.js";

/** Whose access is checked: a request's caller, or a user alone (a schedule, an inbound webhook). */
export type Member = Pick<Caller, "user">;

/** D10: a workspace the caller is not a member of is refused the same way whether or not it exists. */
export async function requireMember(store: Store, member: Member, workspaceId: string): Promise<void> {
  if (!(await store.accounts.isMember(member.user.id, workspaceId))) {
    throw new ConnectError(`no access to workspace ${workspaceId}`, Code.PermissionDenied);
  }
}

/** D10: something outside the caller's workspaces is "not found", never "forbidden": existence is not leaked. */
export async function visibleTo<T>(
  store: Store,
  member: Member,
  found: T | undefined,
  workspaceOf: (found: T) => string,
  what: string,
): Promise<T> {
  if (found === undefined || !(await store.accounts.isMember(member.user.id, workspaceOf(found)))) {
    throw new ConnectError(`${what} not found`, Code.NotFound);
  }
  return found;
}

/** A workflow the caller may use: in one of their workspaces and not deleted. */
export async function visibleWorkflow(
  store: Store,
  member: Member,
  id: string,
): Promise<StoredWorkflowRecord> {
  const workflow = await store.workflows.getWorkflow(id);
  return visibleTo(
    store,
    member,
    workflow?.deletedAt === null ? workflow : undefined,
    (w) => w.workspaceId,
    `workflow ${id}`,
  );
}
