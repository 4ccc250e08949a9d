import { create } from "@bufbuild/protobuf";
import {
  type GetLogRequest,
  type GetLogResponse,
  GetLogResponseSchema,
  type ListLogsRequest,
  type ListLogsResponse,
  ListLogsResponseSchema,
} from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { loadConfig } from "../../src/config/config.js";
import { takeApiToken } from "../../src/domain/api-rate-limit.js";
import { hashApiKey } from "../../src/services/accounts/api-keys.js";
import { databaseFile, openDatabase } from "../../src/store/database.js";
import { entryByIdSql, listQuery } from "../../src/store/logs-store.js";
import type { UserRecord } from "../../src/store/records.js";
import { openStore } from "../../src/store/store.js";
import { isoFromMs } from "../../src/util/time.js";

/**
 * The work of the gateway bench's framework floors (issue 13), for the bare servers that serve the
 * `LogsService` messages (bare-connect-server.ts, bare-grpc-server.ts): the `floor` server's work (the
 * page's SQL, the API token's take, a data_version look, the key's owner from a Map), a page answered in
 * the list form's fields straight from the columns and one entry as its id alone. No validation,
 * authorization, limits object or metrics.
 */
export interface FloorService {
  /** Takes the key's API token: false for an unknown key or an empty bucket. */
  admit(key: string): Promise<boolean>;
  listLogs(request: ListLogsRequest): ListLogsResponse;
  getLog(request: GetLogRequest): GetLogResponse | undefined;
}

interface ListRow {
  id: string;
  workflow_id: string;
  execution_id: string;
  level: string;
  trigger: string;
  started_at: number;
  ended_at: number;
  total_duration_ms: number;
  cost_total: number;
}

export function createFloorService(dataDir: string): FloorService {
  const db = openDatabase(databaseFile(dataDir));
  const dataVersion = db.prepare("PRAGMA data_version").pluck();
  const byId = db.prepare(entryByIdSql);
  const lists = new Map<string, ReturnType<typeof db.prepare>>();
  const store = openStore({ dataDir });
  const { planLimits } = loadConfig();
  const owners = new Map<string, UserRecord>();
  return {
    async admit(key) {
      dataVersion.get();
      let user = owners.get(key);
      if (!user) {
        user = (await store.accounts.ownerOfKeyHash(hashApiKey(key)))?.user;
        if (!user) return false;
        owners.set(key, user);
      }
      return (await takeApiToken(store, planLimits, user, Date.now())).allowed;
    },
    listLogs(request) {
      const page = {
        order: "desc",
        limit: request.limit || 100,
        withTraceSpans: false,
        withFinalOutput: false,
      };
      const { sql, params } = listQuery({ workspaceId: request.workspaceId }, page as never);
      let statement = lists.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        lists.set(sql, statement);
      }
      const rows = (statement.all(params) as ListRow[]).slice(0, page.limit);
      return create(ListLogsResponseSchema, {
        data: rows.map((row) => ({
          id: row.id,
          workflowId: row.workflow_id,
          executionId: row.execution_id,
          level: row.level,
          trigger: row.trigger,
          startedAt: isoFromMs(row.started_at),
          endedAt: isoFromMs(row.ended_at),
          totalDurationMs: row.total_duration_ms,
          cost: { total: row.cost_total },
        })),
      });
    },
    getLog(request) {
      const row = byId.get(request.id) as { id: string } | undefined;
      return row && create(GetLogResponseSchema, { data: { id: row.id } });
    },
  };
}
