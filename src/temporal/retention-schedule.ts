import {
  type Client,
  ScheduleAlreadyRunning,
  type ScheduleOptionsAction,
  ScheduleOverlapPolicy,
  type ScheduleSpec,
} from "@temporalio/client";

/** D41: the one Schedule of the retention purge in a namespace, as operators find it in the Temporal UI. */
export const retentionScheduleId = "flowlog-retention";

const hourly: ScheduleSpec = { intervals: [{ every: "1 hour" }] };

/**
 * Creates the hourly Schedule of the retention purge, or brings the one there up to date: its id is
 * fixed, so however many workers start, in any order, the namespace holds exactly one. A run still going
 * when the next is due lets that one be skipped. `scheduleId` is for tests, which keep theirs apart.
 */
export async function ensureRetentionSchedule(
  client: Client,
  taskQueue: string,
  scheduleId = retentionScheduleId,
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
