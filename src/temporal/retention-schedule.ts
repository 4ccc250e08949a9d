import {
  type Client,
  ScheduleAlreadyRunning,
  type ScheduleOptionsAction,
  ScheduleOverlapPolicy,
  type ScheduleSpec,
} from "@temporalio/client";
import { FLOWLOG_TASK_QUEUE } from "./task-queue.js";

/**
 * D41: the one Schedule of the retention purge of a deployment, as operators find it in the Temporal UI:
 * `flowlog-retention` on the default task queue, named after its queue on another (FLOWLOG_TASK_QUEUE), so
 * deployments sharing a namespace each purge their own store.
 */
export function retentionScheduleIdFor(taskQueue: string = FLOWLOG_TASK_QUEUE): string {
  return taskQueue === FLOWLOG_TASK_QUEUE ? "flowlog-retention" : `flowlog-retention-${taskQueue}`;
}

const hourly: ScheduleSpec = { intervals: [{ every: "1 hour" }] };

/**
 * Creates the hourly Schedule of the retention purge, or brings the one there up to date: its id is
 * fixed, so however many workers of a deployment start, in any order, the namespace holds exactly one. A run still going
 * when the next is due lets that one be skipped. `scheduleId` is for tests, which keep theirs apart.
 */
export async function ensureRetentionSchedule(
  client: Client,
  taskQueue: string,
  scheduleId = retentionScheduleIdFor(taskQueue),
): Promise<void> {
  const action: ScheduleOptionsAction = {
    type: "startWorkflow",
    workflowType: "purgeExpiredLogs",
    workflowId: `${scheduleId}-run`,
    taskQueue,
    args: [],
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP };
  try {
    await client.schedule.create({ scheduleId, spec: hourly, action, policies });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule
      .getHandle(scheduleId)
      .update((previous) => ({ ...previous, spec: hourly, action, policies }));
  }
}
