import { createServer } from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  GetLogResponseSchema,
  ListLogsResponseSchema,
  LogsService,
} from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { loadConfig } from "../../src/config/config.js";
import { takeApiToken } from "../../src/domain/api-rate-limit.js";
import { registerReflection } from "../../src/server/reflection.js";
import { hashApiKey } from "../../src/services/accounts/api-keys.js";
import { databaseFile, openDatabase } from "../../src/store/database.js";
import { entryByIdSql, listQuery } from "../../src/store/logs-store.js";
import type { UserRecord } from "../../src/store/records.js";
import { openStore } from "../../src/store/store.js";
import { isoFromMs } from "../../src/util/time.js";

/**
 * The gateway bench's framework floor (issue 13): the bare `floor` server's work (the page's SQL, the API
 * token's take, a data_version look, the key's owner from a Map) behind Connect-ES's own Node adapter,
 * with the generated LogsService and nothing else: no interceptor, validation, authorization, limits
 * object or metrics. A page answers the list form's fields straight from the columns; one entry answers
 * its id alone. What any server that serves the
 * `.proto` through Connect handlers (D2) pays at least, over the Connect protocol on HTTP/1.1 and over
 * gRPC on h2c, each on a port of its own.
 *
 *     node --import tsx bench/support/bare-connect-server.ts <data dir>
 */
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

const [dataDir] = process.argv.slice(2);
if (!dataDir) throw new Error("usage: bare-connect-server.ts <data dir>");

const db = openDatabase(databaseFile(dataDir));
const dataVersion = db.prepare("PRAGMA data_version").pluck();
const byId = db.prepare(entryByIdSql);
const lists = new Map<string, ReturnType<typeof db.prepare>>();
const store = openStore({ dataDir });
const { planLimits } = loadConfig();
const owners = new Map<string, UserRecord>();

async function takeToken(context: HandlerContext): Promise<void> {
  dataVersion.get();
  const key = context.requestHeader.get("x-api-key") ?? "";
  let user = owners.get(key);
  if (!user) {
    user = (await store.accounts.ownerOfKeyHash(hashApiKey(key)))?.user;
    if (!user) throw new ConnectError("unknown key", Code.Unauthenticated);
    owners.set(key, user);
  }
  if (!(await takeApiToken(store, planLimits, user, Date.now())).allowed) {
    throw new ConnectError("rate limited", Code.ResourceExhausted);
  }
}

function routes(router: ConnectRouter): void {
  router.service(LogsService, {
    async listLogs(request, context) {
      await takeToken(context);
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
      // The list form's fields (spec), straight from the columns: no parsed JSON, no presence rules.
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
    async getLog(request, context) {
      await takeToken(context);
      const row = byId.get(request.id) as { id: string } | undefined;
      if (!row) throw new ConnectError("not found", Code.NotFound);
      return create(GetLogResponseSchema, { data: { id: row.id } });
    },
  });
  registerReflection(router, [LogsService]);
}

const handler = connectNodeAdapter({ routes });
const h1 = createServer(handler);
const h2 = http2.createServer(handler);
h1.listen(0, "127.0.0.1", () => {
  h2.listen(0, "127.0.0.1", () => {
    const port = (server: { address(): unknown }) => (server.address() as AddressInfo).port;
    console.log(`bare connect server on ports ${port(h1)} ${port(h2)}`);
  });
});
process.on("SIGTERM", () => {
  h1.close();
  h1.closeAllConnections();
  h2.close();
});
