import { toJson } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { type Client, ScheduleNotFoundError } from "@temporalio/client";
import type { Schedule, TriggersService } from "../../../gen/flowlog/workflows/v1/triggers_service_pb.js";
import { invalidArgument, quotaReached } from "../../errors/api-errors.js";
import { FailedAuthentication } from "../../errors/failed-authentication.js";
import { hashToken, newSecretToken } from "../../security/tokens.js";
import type { ScheduleRecord } from "../../store/triggers-store.js";
import { executionSearchAttributes, executionWorkflowId } from "../../temporal/start-execution.js";
import { FLOWLOG_TASK_QUEUE } from "../../temporal/task-queue.js";
import { newId } from "../../util/ids.js";
import { isoFromMs } from "../../util/time.js";
import { callerOf } from "../caller.js";
import { setRestStatus } from "../rest-status.js";
import { type Member, visibleWorkflow } from "../workspace-access.js";
import { type ExecutionDependencies, runWorkflow } from "./executions.js";
import { scheduleFrequency } from "./schedule-interval.js";
import { deleteTemporalSchedule, scheduleTemporalId } from "./temporal-schedules.js";

export interface TriggersDependencies extends ExecutionDependencies {
  publicBaseUrl: string;
}

/** The webhook and schedule triggers (D15). */
export function createTriggersService(
  deps: TriggersDependencies,
): Partial<ServiceImpl<typeof TriggersService>> {
  const { store, temporal, clock } = deps;
  const scheduleHandle = (id: string) => temporal.schedule.getHandle(scheduleTemporalId(id));

  /** A schedule the caller may manage: its workflow is visible to them; else "not found" (D10). */
  const visibleSchedule = async (member: Member, id: string): Promise<ScheduleRecord> => {
    const schedule = await store.triggers.getSchedule(id);
    if (!schedule) throw new ConnectError(`schedule ${id} not found`, Code.NotFound);
    await visibleWorkflow(store, member, schedule.workflowId);
    return schedule;
  };

  const describe = async (schedule: ScheduleRecord): Promise<Schedule> => {
    const paused = await scheduleHandle(schedule.id)
      .describe()
      .then((d) => d.state.paused)
      .catch((error: unknown) => {
        if (error instanceof ScheduleNotFoundError) return false;
        throw error;
      });
    return {
      $typeName: "flowlog.workflows.v1.Schedule",
      id: schedule.id,
      workflowId: schedule.workflowId,
      cron: schedule.cron,
      paused,
      createdAt: isoFromMs(schedule.createdAt),
    };
  };

  /** Pause and resume differ only in which way Temporal's schedule is switched. */
  const setPaused =
    (paused: boolean) =>
    async (request: { id: string }, context: HandlerContext): Promise<{ schedule: Schedule }> => {
      const schedule = await visibleSchedule(callerOf(context.values), request.id);
      const handle = scheduleHandle(schedule.id);
      await missingAsNotFound(
        schedule.id,
        paused
          ? handle.pause("paused through the flowlog API")
          : handle.unpause("resumed through the flowlog API"),
      );
      return { schedule: await describe(schedule) };
    };

  return {
    async createWebhook(request, context) {
      const caller = callerOf(context.values);
      const { user } = caller;
      const workflow = await visibleWorkflow(store, caller, request.workflowId);
      const token = newSecretToken("whk");
      const createdAt = clock();
      await store.triggers.setWebhook(
        { workflowId: workflow.id, billedUserId: user.id, createdAt },
        hashToken(token),
      );
      const url = `${deps.publicBaseUrl}/api/v1/webhooks/${encodeURIComponent(workflow.id)}/${token}`;
      return { url, createdAt: isoFromMs(createdAt) };
    },

    async deleteWebhook(request, context) {
      const caller = callerOf(context.values);
      await visibleWorkflow(store, caller, request.workflowId);
      if (!(await store.triggers.deleteWebhook(request.workflowId))) {
        throw new ConnectError(`workflow ${request.workflowId} has no webhook`, Code.NotFound);
      }
      return {};
    },

    async invokeWebhook(request, context) {
      // The token authenticates; a wrong token and a workflow without a webhook answer alike.
      const webhook = await store.triggers.webhookByToken(request.workflowId, hashToken(request.token));
      const user = webhook && (await store.accounts.getUser(webhook.billedUserId));
      if (!webhook || !user) throw new FailedAuthentication("no such webhook", Code.NotFound);
      // No key came with the call: the membership check looks for itself.
      const { executionId } = await runWorkflow(deps, {
        caller: { user },
        workflowId: request.workflowId,
        trigger: "webhook",
        mode: "async",
        input: request.payload,
      });
      setRestStatus(context, 202);
      return { executionId };
    },

    async createSchedule(request, context) {
      const caller = callerOf(context.values);
      const { user } = caller;
      const workflow = await visibleWorkflow(store, caller, request.workflowId);
      const cron = request.cron.trim();
      const tooFrequent = frequencyProblem(cron, deps.quotas.workflow.minScheduleIntervalSeconds);
      if (tooFrequent) throw invalidArgument([{ field: "cron", message: tooFrequent }]);
      const schedule: ScheduleRecord = {
        id: newId("sch"),
        workflowId: workflow.id,
        cron,
        billedUserId: user.id,
        createdAt: clock(),
      };
      // The row first (D26 counted in the same transaction), then the Temporal Schedule: no schedule ever
      // runs without a row through which it can be paused, deleted and ended with its workflow (D31).
      const max = deps.quotas.workflow.maxSchedules;
      const reserved = await store.triggers.addSchedule(schedule, max);
      if (!reserved) throw new ConnectError(`workflow ${workflow.id} not found`, Code.NotFound);
      if ("full" in reserved) {
        const holder = `workflow ${workflow.id}`;
        throw quotaReached({
          quota: "workflow.maxSchedules",
          holder,
          counted: "schedules",
          count: reserved.full,
          max,
        });
      }
      try {
        await createTemporalSchedule(temporal, deps.taskQueue, schedule, workflow, request.input);
      } catch (error) {
        await store.triggers.deleteSchedule(schedule.id);
        throw error;
      }
      // Deleted while Temporal was creating it: the deletion may have looked before the schedule existed.
      if ((await store.workflows.getWorkflow(workflow.id))?.deletedAt !== null) {
        await deleteTemporalSchedule(temporal, schedule.id);
        await store.triggers.deleteSchedule(schedule.id);
        throw new ConnectError(`workflow ${workflow.id} not found`, Code.NotFound);
      }
      return { schedule: await describe(schedule) };
    },

    async listSchedules(request, context) {
      const caller = callerOf(context.values);
      await visibleWorkflow(store, caller, request.workflowId);
      const schedules = await store.triggers.listSchedules(request.workflowId);
      return { schedules: await Promise.all(schedules.map(describe)) };
    },

    pauseSchedule: setPaused(true),
    resumeSchedule: setPaused(false),

    async deleteSchedule(request, context) {
      const schedule = await visibleSchedule(callerOf(context.values), request.id);
      await deleteTemporalSchedule(temporal, schedule.id);
      await store.triggers.deleteSchedule(schedule.id);
      return {};
    },
  };
}

/** A schedule Temporal no longer has (deleted by an operator in its UI) is "not found", not a fault. */
async function missingAsNotFound(id: string, call: Promise<void>): Promise<void> {
  await call.catch((error: unknown) => {
    if (error instanceof ScheduleNotFoundError)
      throw new ConnectError(`schedule ${id} not found`, Code.NotFound);
    throw error;
  });
}

/** D26: a cron that fires more often than the quota allows, or that cannot be read well enough to tell. */
function frequencyProblem(cron: string, minSeconds: number): string | undefined {
  const frequency = scheduleFrequency(cron);
  if (!frequency) return undefined;
  if ("unreadable" in frequency) return `cron ${cron}: ${frequency.unreadable}`;
  if (frequency.shortestGapSeconds >= minSeconds) return undefined;
  return (
    `cron ${cron} fires ${frequency.shortestGapSeconds} s apart; runs of a schedule must be at least ` +
    `${minSeconds} s apart (D26)`
  );
}

/** The Temporal Schedule that starts the workflow's current version at each cron time (D15). */
async function createTemporalSchedule(
  temporal: Client,
  taskQueue: string | undefined,
  schedule: ScheduleRecord,
  workflow: { id: string; workspaceId: string },
  input: Value | undefined,
): Promise<void> {
  try {
    await temporal.schedule.create({
      scheduleId: scheduleTemporalId(schedule.id),
      spec: { cronExpressions: [schedule.cron] },
      action: {
        type: "startWorkflow",
        workflowType: "executeWorkflow",
        workflowId: executionWorkflowId(`scheduled-${schedule.id}`),
        taskQueue: taskQueue ?? FLOWLOG_TASK_QUEUE,
        typedSearchAttributes: executionSearchAttributes({
          workspaceId: workflow.workspaceId,
          workflowId: workflow.id,
          trigger: "schedule",
        }),
        args: [
          {
            // Each run takes its executionId from its own Temporal workflow id (the schedule appends
            // the fire time), so every scheduled execution is logged once under its own id.
            executionId: "",
            workspaceId: workflow.workspaceId,
            workflowId: workflow.id,
            version: 0,
            trigger: "schedule",
            input: input ? toJson(ValueSchema, input) : null,
            billedUserId: schedule.billedUserId,
          },
        ],
      },
    });
  } catch (error) {
    // The SDK reports the server's "Invalid schedule spec" as a TypeError holding only the reason
    // ("Minute is not in range [0-59]"); the cron is the one part of the spec the caller gave.
    if (error instanceof TypeError) {
      throw invalidArgument([
        {
          field: "cron",
          message: `cron is not a valid cron expression (${error.message}): ${schedule.cron}`,
        },
      ]);
    }
    throw error;
  }
}
