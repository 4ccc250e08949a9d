import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type AdminService,
  type ApiKey,
  ApiKeySchema,
  type User,
  UserSchema,
  type Workspace,
  WorkspaceSchema,
} from "../../../gen/flowlog/admin/v1/admin_service_pb.js";
import type { ApiKeyRecord, UserRecord } from "../../store/records.js";
import { isoFromMs } from "../../util/time.js";
import type { AccountsService, WorkspaceWithMembers } from "./accounts-service.js";

/**
 * flowlog.admin.v1 for operators (D5, D6): the rules are AccountsService's; this maps records to
 * the messages the .proto defines. The operator token is checked in front of it, by the
 * authentication interceptor.
 */
export function createAdminService(accounts: AccountsService): Partial<ServiceImpl<typeof AdminService>> {
  return {
    createUser: async (request) => ({
      user: userMessage(await accounts.createUser(request.email, request.plan)),
    }),
    listUsers: async () => ({ users: (await accounts.listUsers()).map(userMessage) }),
    createWorkspace: async (request) => ({
      workspace: workspaceMessage(await accounts.createWorkspace(request.name, request.memberUserIds)),
    }),
    listWorkspaces: async (request) => ({
      workspaces: (await accounts.listWorkspaces(request.userId)).map(workspaceMessage),
    }),
    addWorkspaceMember: async (request) => ({
      workspace: workspaceMessage(await accounts.addWorkspaceMember(request.workspaceId, request.userId)),
    }),
    createApiKey: async (request) => {
      const { record, key } = await accounts.createApiKey(request.userId);
      return { apiKey: apiKeyMessage(record), key };
    },
    listApiKeys: async (request) => ({
      apiKeys: (await accounts.listApiKeys(request.userId)).map(apiKeyMessage),
    }),
    revokeApiKey: async (request) => ({ apiKey: apiKeyMessage(await accounts.revokeApiKey(request.id)) }),
  };
}

// The CLI prints these same messages as JSON, so both surfaces share one shape (D2).

export function userMessage(user: UserRecord): User {
  return create(UserSchema, { ...user, createdAt: isoFromMs(user.createdAt) });
}

export function workspaceMessage(workspace: WorkspaceWithMembers): Workspace {
  return create(WorkspaceSchema, { ...workspace, createdAt: isoFromMs(workspace.createdAt) });
}

export function apiKeyMessage(key: ApiKeyRecord): ApiKey {
  return create(ApiKeySchema, {
    id: key.id,
    userId: key.userId,
    prefix: key.prefix,
    createdAt: isoFromMs(key.createdAt),
    lastUsedAt: optionalIso(key.lastUsedAt),
    revokedAt: optionalIso(key.revokedAt),
  });
}

function optionalIso(ms: number | null): string | undefined {
  return ms === null ? undefined : isoFromMs(ms);
}
