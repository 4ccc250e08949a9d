import type { MessageInitShape } from "@bufbuild/protobuf";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type {
  ExportLogsRequest,
  ExportLogsResponse,
  LogsService,
  TailLogsRequest,
  TailLogsResponseSchema,
} from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { WorkflowStateSchema } from "../../../gen/flowlog/workflows/v1/workflow_pb.js";
import { toPublicError } from "../../errors/public-error.js";
import { computeLimits } from "../../limits/execution-limits.js";
import { ExportSlots } from "../../limits/export-slots.js";
import type { PlanTable } from "../../limits/plans.js";
import type { Quotas } from "../../limits/quotas.js";
import { StatsSlots } from "../../limits/stats-slots.js";
import { type Logger, logger as processLogger } from "../../logging/logger.js";
import type { UserRecord } from "../../store/records.js";
import type { Store } from "../../store/store.js";
import { callerOf } from "../caller.js";
import { requireMember, visibleTo } from "../workspace-access.js";
import { encodeCursor } from "./cursor.js";
import { deleteLogs } from "./delete-logs.js";
import { parseExportLogsRequest } from "./export-logs-request.js";
import { parseListLogsRequest } from "./list-logs-request.js";
import { executionMetadata, logEntryView } from "./log-entry-view.js";
import { exportBatches } from "./log-export.js";
import { logRetentionOf, setLogRetention } from "./log-retention.js";
import { parseGetLogStatsRequest } from "./log-stats-request.js";
import { logStatsView } from "./log-stats-view.js";
import type { LogTails } from "./log-tails.js";
import { parseTailLogsRequest } from "./tail-logs-request.js";
import { encodeResumeToken } from "./tail-token.js";
import { workflowsOf } from "./workflow-summaries.js";

export interface LogsServiceDependencies {
  store: Store;
  /** What the limits object of every body reports (D12). */
  planLimits: PlanTable;
  /**
   * How many values a list filter may hold (D26), how long a range the stats take (issue 17), and how
   * many stats calls and exports run at once (D46, D45).
   */
  quotas: Pick<Quotas, "listParameterValues" | "logStatsRangeDays" | "reads">;
  clock: () => number;
  /** Where DeleteLogs' audit lines go (D43); the process's logger unless a test reads them. */
  logger?: Logger;
  /** The process's open tails and the reader they share (D44). */
  tails: LogTails;
  /** D44: a heartbeat after this long without a message. */
  tailHeartbeatMs?: number;
}

/** D44's heartbeat interval. */
const defaultTailHeartbeatMs = 15_000;

/** The external read API for execution logs (spec "Endpoints"). */
export function createLogsService({
  store,
  planLimits,
  quotas,
  clock,
  logger = processLogger,
  tails,
  tailHeartbeatMs = defaultTailHeartbeatMs,
}: LogsServiceDependencies): Partial<ServiceImpl<typeof LogsService>> {
  const limitsOf = (user: UserRecord) => computeLimits(store, planLimits, user, clock());
  const statsSlots = new StatsSlots(quotas.reads);
  const exportSlots = new ExportSlots(quotas.reads);

  /**
   * D44: the stream opens once the caller may read the workspace and holds an open tail of its plan's;
   * its first message is a heartbeat with the token of where it starts, then the entries as they are
   * written, and a heartbeat whenever `tailHeartbeatMs` passes without a message.
   */
  async function* tailLogs(
    request: TailLogsRequest,
    context: HandlerContext,
  ): AsyncGenerator<MessageInitShape<typeof TailLogsResponseSchema>> {
    const caller = callerOf(context.values);
    const lastEventId = context.requestHeader.get("last-event-id");
    const query = parseTailLogsRequest(request, quotas.listParameterValues, lastEventId);
    await requireMember(store, caller, request.workspaceId);
    const full = query.details === "full";
    const view = { full, traceSpans: query.withTraceSpans, finalOutput: query.withFinalOutput };
    const tail = await tails.open(
      {
        userId: caller.user.id,
        filter: query.filter,
        read: { withCostDetail: full, withTraceSpans: view.traceSpans, withFinalOutput: view.finalOutput },
        resumeFrom: query.resumeFrom,
      },
      planLimits[caller.user.plan].openTails,
    );
    const token = (position: Parameters<typeof encodeResumeToken>[0]) =>
      encodeResumeToken(position, query.binding);
    try {
      let last = token(tail.resumePosition() ?? query.resumeFrom ?? { xid: "0", seq: 0 });
      yield { resumeToken: last };
      while (!context.signal.aborted) {
        const entries = await tail.next(tailHeartbeatMs, context.signal);
        if (context.signal.aborted) return;
        if (entries.length === 0) {
          const at = tail.resumePosition();
          if (at) last = token(at);
          yield { resumeToken: last };
          continue;
        }
        const workflows = full
          ? await workflowsOf(
              store,
              entries.map((e) => e.entry),
            )
          : new Map();
        for (const { entry, position } of entries) {
          last = token(position);
          yield { entry: logEntryView(entry, workflows.get(entry.workflowId), view), resumeToken: last };
        }
      }
    } catch (error) {
      throw toPublicError(error, "TailLogs");
    } finally {
      tail.close();
    }
  }

  /**
   * D45: the entries the list selects, in its order, a batch per message, once the caller may read the
   * workspace and holds one of its user's export slots; the slot is freed however the stream ends.
   */
  async function* exportLogs(
    request: ExportLogsRequest,
    context: HandlerContext,
  ): AsyncGenerator<ExportLogsResponse> {
    const caller = callerOf(context.values);
    const query = parseExportLogsRequest(request, quotas.listParameterValues);
    await requireMember(store, caller, request.workspaceId);
    const release = exportSlots.take(caller.user.id);
    try {
      for await (const entries of exportBatches(store, query, context.signal)) {
        yield { $typeName: "flowlog.logs.v1.ExportLogsResponse", entries };
      }
    } catch (error) {
      // A client that left has no one to tell; its reading stopped, which is all that was wanted.
      if (context.signal.aborted) return;
      throw toPublicError(error, "ExportLogs");
    } finally {
      release();
    }
  }

  return {
    async listLogs(request, context) {
      const caller = callerOf(context.values);
      const { user } = caller;
      const query = parseListLogsRequest(request, quotas.listParameterValues);
      await requireMember(store, caller, request.workspaceId);
      const page = await store.logs.list(query.filter, query.page, context.signal);
      const workflows = query.details === "full" ? await workflowsOf(store, page.entries) : new Map();
      const view = {
        full: query.details === "full",
        traceSpans: query.page.withTraceSpans,
        finalOutput: query.page.withFinalOutput,
      };
      return {
        data: page.entries.map((entry) => logEntryView(entry, workflows.get(entry.workflowId), view)),
        nextCursor: page.next && encodeCursor(page.next, query.page.order),
        limits: await limitsOf(user),
      };
    },

    tailLogs(request, context) {
      return tailLogs(request, context);
    },

    exportLogs(request, context) {
      return exportLogs(request, context);
    },

    async getLogStats(request, context) {
      const caller = callerOf(context.values);
      const { user } = caller;
      const { filter, range } = parseGetLogStatsRequest(request, quotas, clock());
      await requireMember(store, caller, request.workspaceId);
      const stats = await statsSlots.run(user.id, () => store.logs.stats(filter, range, context.signal));
      return logStatsView(stats, range, await limitsOf(user));
    },

    async deleteLogs(request, context) {
      const caller = callerOf(context.values);
      const deps = { store, maxListValues: quotas.listParameterValues, logger };
      return deleteLogs(deps, caller, request, () => limitsOf(caller.user), context.signal);
    },

    async getLogRetention(request, context) {
      const caller = callerOf(context.values);
      const retention = await logRetentionOf(store, planLimits, caller, request.workspaceId);
      return { retention, limits: await limitsOf(caller.user) };
    },

    async updateLogRetention(request, context) {
      const caller = callerOf(context.values);
      const { workspaceId, retentionDays } = request;
      const retention = await setLogRetention(store, planLimits, caller, workspaceId, retentionDays);
      return { retention, limits: await limitsOf(caller.user) };
    },

    async getLog(request, context) {
      const caller = callerOf(context.values);
      const { user } = caller;
      const { entry, workflow } = await visibleTo(
        store,
        caller,
        await store.logs.getEntryView(request.id),
        (found) => found.entry.workspaceId,
        `log entry ${request.id}`,
      );
      const [limits, retries] = await Promise.all([limitsOf(user), store.logs.retryLinks(entry.executionId)]);
      const view = { full: true, traceSpans: true, finalOutput: true, limits, retries };
      return { data: logEntryView(entry, workflow, view), limits };
    },

    async getExecution(request, context) {
      const caller = callerOf(context.values);
      const { user } = caller;
      const { entry, workflowState, workflowVersion } = await visibleTo(
        store,
        caller,
        await store.logs.getExecution(request.executionId),
        (found) => found.entry.workspaceId,
        `execution ${request.executionId}`,
      );
      return {
        executionId: entry.executionId,
        workflowId: entry.workflowId,
        workflowState: fromJson(WorkflowStateSchema, workflowState as JsonValue, {
          ignoreUnknownFields: true,
        }),
        executionMetadata: executionMetadata(
          entry,
          await store.logs.retryLinks(entry.executionId),
          workflowVersion,
        ),
        limits: await limitsOf(user),
      };
    },
  };
}
