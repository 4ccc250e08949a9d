import { type Client, ScheduleNotFoundError } from "@temporalio/client";

/** The Temporal Schedule behind a flowlog schedule, as operators find it in the Temporal UI. */
export function scheduleTemporalId(id: string): string {
  return `flowlog-${id}`;
}

/**
 * Deletes the Temporal Schedule of a flowlog schedule. One already gone (deleted by an operator in the
 * Temporal UI, or by an earlier attempt that failed before its row was removed) is what was wanted.
 */
export async function deleteTemporalSchedule(temporal: Client, id: string): Promise<void> {
  await temporal.schedule
    .getHandle(scheduleTemporalId(id))
    .delete()
    .catch((error: unknown) => {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    });
}
