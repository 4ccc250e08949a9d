import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "../../src/config/config.js";
import { takeApiToken } from "../../src/limits/api-rate-limit.js";
import { executionBucket } from "../../src/limits/execution-limits.js";
import { hashApiKey } from "../../src/services/accounts/api-keys.js";
import { databaseFile, openDatabase } from "../../src/store/database.js";
import type { PageRequest } from "../../src/store/log-list-sql.js";
import { entryByIdSql, listQuery } from "../../src/store/logs-store.js";
import type { UserRecord } from "../../src/store/records.js";
import { openStore } from "../../src/store/store.js";

/**
 * The gateway bench's baselines (issue 7, item 2): bare `node:http` servers over the same SQLite file,
 * answering `JSON.stringify` of what they read, with no routing framework, interceptors or protobuf.
 *
 * - `page`: only the SQL that reads the page or the entry, the rows as SQLite returns them.
 * - `arrays`: `page` with the rows read as arrays (better-sqlite3's raw mode, as flowlog's store reads a
 *   page) and made objects here by their column names: the same answer, from cheaper reads.
 * - `request`: every statement flowlog runs for the same request, through the same store methods: the
 *   key lookup, the rate-limit take (a write), the membership check, the page or entry, the workflow
 *   (for one entry) and the usage snapshot of the limits object.
 * - `floor` (issue 13): what no cache can spare a request: `page`'s statement, the API token's take
 *   through the store's own code (D11: every authenticated request takes one, in state shared by every
 *   process on the machine) and the `PRAGMA data_version` look that tells a cache whether another
 *   process changed keys, members or usage. The key's owner is remembered in a Map, a cache at its best.
 *
 *     node --import tsx bench/support/bare-logs-server.ts <page|arrays|request|floor> <data dir>
 */
const [mode, dataDir] = process.argv.slice(2);
const modes = ["page", "arrays", "request", "floor"];
if (!modes.includes(mode ?? "") || !dataDir) {
  throw new Error(`usage: bare-logs-server.ts <${modes.join("|")}> <data dir>`);
}

/** The statement of flowlog's own page for the bench's request (details=basic): the same columns. */
const listPage = (limit: number): PageRequest => ({
  order: "desc",
  limit,
  withCostDetail: false,
  withTraceSpans: false,
  withFinalOutput: false,
});

/** The store's reads are async (issue 15: one contract for SQLite and PostgreSQL); the bare SQL is not. */
type Answer = (url: URL, request: IncomingMessage) => unknown;

function pageStatementsOnly(asArrays = false): { list: Answer; get: Answer } {
  const db = openDatabase(databaseFile(dataDir as string));
  const prepare = (sql: string) => {
    const statement = db.prepare(sql);
    if (!asArrays)
      return { all: (params: unknown) => statement.all(params), get: statement.get.bind(statement) };
    statement.raw(true);
    const names = statement.columns().map((column) => column.name);
    const objectOf = (values: unknown[]) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i];
      return row;
    };
    return {
      all: (params: unknown) => (statement.all(params) as unknown[][]).map(objectOf),
      get: (param: unknown) => {
        const values = statement.get(param) as unknown[] | undefined;
        return values && objectOf(values);
      },
    };
  };
  const byId = prepare(entryByIdSql);
  const lists = new Map<string, ReturnType<typeof prepare>>();
  return {
    list(url) {
      const limit = Number(url.searchParams.get("limit") ?? 100);
      const { sql, params } = listQuery(
        { workspaceId: url.searchParams.get("workspaceId") ?? "" },
        listPage(limit),
      );
      let statement = lists.get(sql);
      if (!statement) {
        statement = prepare(sql);
        lists.set(sql, statement);
      }
      // The query reads one row more than the page to tell whether a next page exists, as the store does.
      return { data: statement.all(params).slice(0, limit) };
    },
    get(url) {
      const row = byId.get(decodeURIComponent(url.pathname.slice("/api/v1/logs/".length)));
      return row && { data: row };
    },
  };
}

function everyStatementOfTheRequest(): { list: Answer; get: Answer } {
  const store = openStore({ dataDir: dataDir as string });
  const { planLimits } = loadConfig();
  const caller = async (request: IncomingMessage) => {
    const owner = await store.accounts.ownerOfKeyHash(hashApiKey(String(request.headers["x-api-key"])));
    if (!owner) return undefined;
    const now = Date.now();
    await takeApiToken(store, planLimits, owner.user, now);
    // The statement behind computeLimits, without building its protobuf message.
    const usage = () =>
      store.usage.snapshot({
        userId: owner.user.id,
        nowMs: now,
        sync: executionBucket(planLimits, owner.user, "sync"),
        async: executionBucket(planLimits, owner.user, "async"),
      });
    return { user: owner.user, usage };
  };
  return {
    async list(url, request) {
      const workspaceId = url.searchParams.get("workspaceId") ?? "";
      const call = await caller(request);
      if (!call || !(await store.accounts.isMember(call.user.id, workspaceId))) return undefined;
      const page = await store.logs.list(
        { workspaceId },
        listPage(Number(url.searchParams.get("limit") ?? 100)),
      );
      return { data: page.entries, next: page.next, limits: await call.usage() };
    },
    async get(url, request) {
      const call = await caller(request);
      const entry = await store.logs.getEntry(decodeURIComponent(url.pathname.slice("/api/v1/logs/".length)));
      if (!call || !entry || !(await store.accounts.isMember(call.user.id, entry.workspaceId)))
        return undefined;
      const workflow = await store.workflows.getWorkflow(entry.workflowId);
      return { data: { ...entry, workflow }, limits: await call.usage() };
    },
  };
}

function whatNoCacheSpares(): { list: Answer; get: Answer } {
  const page = pageStatementsOnly();
  const store = openStore({ dataDir: dataDir as string });
  const dataVersion = openDatabase(databaseFile(dataDir as string))
    .prepare("PRAGMA data_version")
    .pluck();
  const { planLimits } = loadConfig();
  const owners = new Map<string, UserRecord>();
  const taken = async (request: IncomingMessage, answer: unknown) => {
    dataVersion.get();
    const key = String(request.headers["x-api-key"]);
    let user = owners.get(key);
    if (!user) {
      user = (await store.accounts.ownerOfKeyHash(hashApiKey(key)))?.user;
      if (!user) return undefined;
      owners.set(key, user);
    }
    return (await takeApiToken(store, planLimits, user, Date.now())).allowed ? answer : undefined;
  };
  return {
    list: (url, request) => taken(request, page.list(url, request)),
    get: (url, request) => taken(request, page.get(url, request)),
  };
}

const answers =
  mode === "page" || mode === "arrays"
    ? pageStatementsOnly(mode === "arrays")
    : mode === "floor"
      ? whatNoCacheSpares()
      : everyStatementOfTheRequest();
const server = createServer((request, response) => {
  const url = new URL(request.url ?? "/", "http://localhost");
  const answer =
    url.pathname === "/api/v1/logs"
      ? answers.list(url, request)
      : url.pathname.startsWith("/api/v1/logs/")
        ? answers.get(url, request)
        : undefined;
  const send = (body: unknown) => {
    response.writeHead(body ? 200 : 404, { "content-type": "application/json" });
    response.end(body ? JSON.stringify(body) : '{"error":"not found"}');
  };
  // The page baseline answers at once, without a promise's turn; the request one awaits the store.
  if (answer instanceof Promise)
    answer.then(send, (error: unknown) => {
      response.writeHead(500, { "content-type": "text/plain" });
      response.end(String(error));
    });
  else send(answer);
});

server.listen(0, "127.0.0.1", () => {
  console.log(`bare ${mode} server on port ${(server.address() as AddressInfo).port}`);
});
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
});
