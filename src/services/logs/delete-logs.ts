import type { Limits } from "../../../gen/flowlog/logs/v1/limits_pb.js";
import type { DeleteLogsRequest, DeleteLogsResponse } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import type { Logger } from "../../logging/logger.js";
import { deleteInBatches } from "../../store/log-deletion.js";
import type { Store } from "../../store/store.js";
import type { Caller } from "../caller.js";
import { requireMember } from "../workspace-access.js";
import { parseDeleteLogsRequest } from "./delete-logs-request.js";

/**
 * The most one call deletes (D43). SQLite deleted 10,000 entries with their dependants in 1.6-2.3 s on a
 * busy two-core machine (PostgreSQL in the same order): an answer well within a client's timeout, where
 * a Temporal job would add a second call to learn the outcome. A larger selection is deleted by calling
 * again, as the answer's `remaining` says.
 */
export const deleteLogsPerCall = 10_000;

export interface DeleteLogsDependencies {
  store: Store;
  maxListValues: number;
  logger: Logger;
}

/**
 * DeleteLogs (D43): any member of the workspace may call it, as any workspace write (workspace-access.ts:
 * flowlog has no roles). Each call leaves an info line saying who asked (user and key ids, never the
 * key), for which workspace, with which selection, and what went.
 */
export async function deleteLogs(
  { store, maxListValues, logger }: DeleteLogsDependencies,
  caller: Caller,
  request: DeleteLogsRequest,
  limits: () => Promise<Limits>,
  signal: AbortSignal,
): Promise<DeleteLogsResponse> {
  const { filter, preview, selection } = parseDeleteLogsRequest(request, maxListValues);
  await requireMember(store, caller, request.workspaceId);
  const audit = { userId: caller.user.id, keyId: caller.keyId, workspaceId: request.workspaceId, selection };
  if (preview) {
    const entries = await store.logDeletion.count(filter, signal);
    logger.info({ ...audit, preview: true, entries }, "DeleteLogs previewed (D43)");
    return answer({ entries }, 0, await limits());
  }
  const { deleted, done } = await deleteInBatches(store.logDeletion, filter, {
    maxEntries: deleteLogsPerCall,
    signal,
  });
  const remaining = done ? 0 : await store.logDeletion.count(filter, signal);
  logger.info({ ...audit, ...deleted, remaining }, "DeleteLogs deleted log entries (D43)");
  return answer(deleted, remaining, await limits());
}

function answer(
  deleted: { entries: number; snapshots?: number; deliveries?: number; deliveryAttempts?: number },
  remaining: number,
  limits: Limits,
): DeleteLogsResponse {
  return {
    $typeName: "flowlog.logs.v1.DeleteLogsResponse",
    entries: deleted.entries,
    snapshots: deleted.snapshots ?? 0,
    deliveries: deleted.deliveries ?? 0,
    deliveryAttempts: deleted.deliveryAttempts ?? 0,
    remaining,
    limits,
  };
}
