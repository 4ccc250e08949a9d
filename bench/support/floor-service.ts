import { create } from "@bufbuild/protobuf";
import type { LogEntry } from "../../gen/flowlog/logs/v1/log_entry_pb.js";
import {
  type GetLogRequest,
  type GetLogResponse,
  GetLogResponseSchema,
  type ListLogsRequest,
  type ListLogsResponse,
  ListLogsResponseSchema,
} from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { loadConfig } from "../../src/config/config.js";
import { takeApiToken } from "../../src/limits/api-rate-limit.js";
import { hashApiKey } from "../../src/services/accounts/api-keys.js";
import { databaseFile, openDatabase } from "../../src/store/database.js";
import type { PageRequest } from "../../src/store/log-list-sql.js";
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

export function createFloorService(dataDir: string): FloorService {
  const db = openDatabase(databaseFile(dataDir));
  const dataVersion = db.prepare("PRAGMA data_version").pluck();
  const byId = db.prepare(entryByIdSql);
  const lists = new Map<string, { statement: ReturnType<typeof db.prepare>; at: ListColumns }>();
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
      const page: PageRequest = {
        order: "desc",
        limit: request.limit || 100,
        withCostDetail: false,
        withTraceSpans: false,
        withFinalOutput: false,
      };
      const { sql, params } = listQuery({ workspaceId: request.workspaceId }, page);
      let list = lists.get(sql);
      if (!list) {
        // Rows as arrays, the cheapest read better-sqlite3 has, as flowlog's store reads a page.
        const statement = db.prepare(sql).raw(true);
        list = { statement, at: listColumns(statement.columns().map((column) => column.name)) };
        lists.set(sql, list);
      }
      const { at: c } = list;
      const rows = (list.statement.all(params) as unknown[][]).slice(0, page.limit);
      return create(ListLogsResponseSchema, {
        // Message literals, as flowlog's view builds them: `create` would walk the descriptor per entry.
        data: rows.map(
          (row): LogEntry => ({
            $typeName: "flowlog.logs.v1.LogEntry",
            id: row[c.id] as string,
            workflowId: row[c.workflowId] as string,
            executionId: row[c.executionId] as string,
            level: row[c.level] as string,
            trigger: row[c.trigger] as string,
            startedAt: isoFromMs(row[c.startedAt] as number),
            endedAt: isoFromMs(row[c.endedAt] as number),
            totalDurationMs: row[c.duration] as number,
            cost: { $typeName: "flowlog.logs.v1.Cost", total: row[c.cost] as number, models: {} },
          }),
        ),
      });
    },
    getLog(request) {
      const row = byId.get(request.id) as { id: string } | undefined;
      return row && create(GetLogResponseSchema, { data: { id: row.id } });
    },
  };
}

type ListColumns = ReturnType<typeof listColumns>;

/** Where a page's statement puts each column the list form shows, found once per statement. */
function listColumns(names: string[]) {
  const column = (name: string): number => {
    const index = names.indexOf(name);
    if (index < 0) throw new Error(`the page's statement reads no ${name}`);
    return index;
  };
  return {
    id: column("id"),
    workflowId: column("workflow_id"),
    executionId: column("execution_id"),
    level: column("level"),
    trigger: column("trigger"),
    startedAt: column("started_at"),
    endedAt: column("ended_at"),
    duration: column("total_duration_ms"),
    cost: column("cost_total"),
  };
}
