import { clone, fromJson, type JsonValue, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import {
  type FolderSchema,
  type WorkflowSchema,
  type WorkflowState,
  WorkflowStateSchema,
} from "../../../gen/flowlog/workflows/v1/workflow_pb.js";
import type { WorkflowRecord, WorkflowVersionRecord } from "../../store/records.js";
import type { FolderRecord } from "../../store/workflows-store.js";
import { isoFromMs } from "../../util/time.js";

/**
 * The protobuf JSON of a state as the store keeps it (records.ts). Every block carries `enabled` and
 * `config`, so the engine reading the JSON never has to guess that an absent `enabled` means true.
 */
export function storedState(state: WorkflowState): JsonValue {
  const stored = clone(WorkflowStateSchema, state);
  for (const block of Object.values(stored.blocks)) {
    block.enabled ??= true;
    block.config ??= {};
  }
  return toJson(WorkflowStateSchema, stored, { alwaysEmitImplicit: true });
}

export function workflowView(workflow: WorkflowRecord): MessageInitShape<typeof WorkflowSchema> {
  return {
    id: workflow.id,
    workspaceId: workflow.workspaceId,
    folderId: workflow.folderId ?? undefined,
    name: workflow.name,
    description: workflow.description,
    version: workflow.version,
    state: fromJson(WorkflowStateSchema, workflow.state as JsonValue, { ignoreUnknownFields: true }),
    createdAt: isoFromMs(workflow.createdAt),
    updatedAt: isoFromMs(workflow.updatedAt),
  };
}

/** The workflow as one of its versions defined it; updatedAt is when that version was saved. */
export function atVersion(workflow: WorkflowRecord, version: WorkflowVersionRecord): WorkflowRecord {
  const { name, description, state } = version;
  return { ...workflow, name, description, state, version: version.version, updatedAt: version.createdAt };
}

export function folderView(folder: FolderRecord): MessageInitShape<typeof FolderSchema> {
  return { ...folder, createdAt: isoFromMs(folder.createdAt) };
}
