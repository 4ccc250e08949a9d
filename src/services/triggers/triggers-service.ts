import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { ScheduleNotFoundError } from "@temporalio/client";
import type { Schedule, TriggersService } from "../../../gen/flowlog/workflows/v1/triggers_service_pb.js";
import { invalidArgument } from "../../errors/api-errors.js";
import { setRestStatus } from "../../gateway/rest-status.js";
import { hashToken, newSecretToken } from "../../security/tokens.js";
import { callerOf } from "../../server/caller.js";
import type { UserRecord } from "../../store/records.js";
import type { ScheduleRecord } from "../../store/triggers-store.js";
import { executionSearchAttributes, executionWorkflowId } from "../../temporal/start-execution.js";
import { FLOWLOG_TASK_QUEUE } from "../../temporal/task-queue.js";
import { newId } from "../../util/ids.js";
import { isoFromMs } from "../../util/time.js";
import { visibleWorkflow } from "../workspace-access.js";
import { type ExecutionDependencies, runWorkflow } from "./executions.js";

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
  const visibleSchedule = (user: UserRecord, id: string): ScheduleRecord => {
    const schedule = store.triggers.getSchedule(id);
    if (!schedule) throw new ConnectError(`schedule ${id} not found`, Code.NotFound);
    visibleWorkflow(store, user, schedule.workflowId);
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
      const schedule = visibleSchedule(callerOf(context.values).user, request.id);
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
    createWebhook(request, context) {
      const { user } = callerOf(context.values);
      const workflow = visibleWorkflow(store, user, request.workflowId);
      const token = newSecretToken("whk");
      const createdAt = clock();
      store.triggers.setWebhook(
        { workflowId: workflow.id, billedUserId: user.id, createdAt },
        hashToken(token),
      );
      const url = `${deps.publicBaseUrl}/api/v1/webhooks/${encodeURIComponent(workflow.id)}/${token}`;
      return { url, createdAt: isoFromMs(createdAt) };
    },

    deleteWebhook(request, context) {
      const { user } = callerOf(context.values);
      visibleWorkflow(store, user, request.workflowId);
      if (!store.triggers.deleteWebhook(request.workflowId)) {
        throw new ConnectError(`workflow ${request.workflowId} has no webhook`, Code.NotFound);
      }
      return {};
    },

    async invokeWebhook(request, context) {
      // The token authenticates; a wrong token and a workflow without a webhook answer alike.
      const webhook = store.triggers.webhookByToken(request.workflowId, hashToken(request.token));
      const user = webhook && store.accounts.getUser(webhook.billedUserId);
      if (!webhook || !user) throw new ConnectError("no such webhook", Code.NotFound);
      const { executionId } = await runWorkflow(deps, {
        user,
        workflowId: request.workflowId,
        trigger: "webhook",
        mode: "async",
        input: request.payload,
      });
      setRestStatus(context, 202);
      return { executionId };
    },

    async createSchedule(request, context) {
      const { user } = callerOf(context.values);
      const workflow = visibleWorkflow(store, user, request.workflowId);
      const schedule: ScheduleRecord = {
        id: newId("sch"),
        workflowId: workflow.id,
        cron: request.cron.trim(),
        billedUserId: user.id,
        createdAt: clock(),
      };
      try {
        await temporal.schedule.create({
          scheduleId: scheduleTemporalId(schedule.id),
          spec: { cronExpressions: [schedule.cron] },
          action: {
            type: "startWorkflow",
            workflowType: "executeWorkflow",
            workflowId: executionWorkflowId(`scheduled-${schedule.id}`),
            taskQueue: deps.taskQueue ?? FLOWLOG_TASK_QUEUE,
            typedSearchAttributes: executionSearchAttributes({
              ...workflow,
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
                input: request.input ? toJson(ValueSchema, request.input) : null,
                billedUserId: user.id,
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
              message: `cron is not a valid cron expression (${error.message}): ${request.cron}`,
            },
          ]);
        }
        throw error;
      }
      store.triggers.addSchedule(schedule);
      return { schedule: await describe(schedule) };
    },

    async listSchedules(request, context) {
      const { user } = callerOf(context.values);
      visibleWorkflow(store, user, request.workflowId);
      return { schedules: await Promise.all(store.triggers.listSchedules(request.workflowId).map(describe)) };
    },

    pauseSchedule: setPaused(true),
    resumeSchedule: setPaused(false),

    async deleteSchedule(request, context) {
      const schedule = visibleSchedule(callerOf(context.values).user, request.id);
      await scheduleHandle(schedule.id)
        .delete()
        .catch((error: unknown) => {
          if (!(error instanceof ScheduleNotFoundError)) throw error;
        });
      store.triggers.deleteSchedule(schedule.id);
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

/** The Temporal Schedule behind a flowlog schedule, as operators find it in the Temporal UI. */
function scheduleTemporalId(id: string): string {
  return `flowlog-${id}`;
}
