import type { Client, WorkflowHandle } from "@temporalio/client";
import { expect } from "vitest";

/** Fires a Temporal Schedule now and returns the workflow run it started, once the schedule reports it. */
export async function fireSchedule(temporal: Client, scheduleId: string): Promise<WorkflowHandle> {
  const schedule = temporal.schedule.getHandle(scheduleId);
  await schedule.trigger();
  let fired: string | undefined;
  await expect
    .poll(async () => {
      fired = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId;
      return fired;
    })
    .toBeDefined();
  return temporal.workflow.getHandle(fired as string);
}
