import { Code, ConnectError } from "@connectrpc/connect";
import type { Client } from "@temporalio/client";
import { logger } from "../../logging/logger.js";
import type { Store } from "../../store/store.js";
import { endInactivityWatchers } from "../../temporal/start-inactivity-watch.js";
import { deleteTemporalSchedule } from "./temporal-schedules.js";

export interface RetirementDependencies {
  store: Store;
  temporal: { client: Client; taskQueue?: string | undefined };
}

/**
 * D31: what runs on behalf of a workflow ends when it is deleted (the workflow is already marked deleted,
 * so no trigger can start a run and no schedule can be added). The webhook goes, so its inbound URL
 * answers 404. Each schedule's Temporal Schedule is deleted first and its row after: should Temporal fail
 * half-way, the rows left are the record of the schedules still running, and deleting the workflow again
 * ends them (a deleted workflow with schedule rows can still be deleted). The no-activity watchers are
 * terminated last; one that survives a failure never fires, as it stops when it finds the workflow deleted.
 * Executions already started are not touched: they finish and are logged.
 */
export async function endWorkflowTriggers(
  { store, temporal }: RetirementDependencies,
  workflow: { id: string; workspaceId: string },
): Promise<void> {
  await store.triggers.deleteWebhook(workflow.id);
  try {
    for (const schedule of await store.triggers.listSchedules(workflow.id)) {
      await deleteTemporalSchedule(temporal.client, schedule.id);
      await store.triggers.deleteSchedule(schedule.id);
    }
    await endInactivityWatchers(temporal.client, store, workflow);
  } catch (error) {
    logger.warn({ err: error, workflowId: workflow.id }, "ending a deleted workflow's triggers failed");
    throw new ConnectError(
      `workflow ${workflow.id} is deleted, but Temporal did not confirm the end of all its schedules and ` +
        "watchers; delete it again to finish (D31)",
      Code.Unavailable,
    );
  }
}
