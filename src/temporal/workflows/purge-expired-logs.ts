import { ActivityFailure, continueAsNew, proxyActivities } from "@temporalio/workflow";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";
import type { ExpiredWorkspace, PurgeRunSummary } from "../activities/retention-activities.js";

const { expiredWorkspaces, recordPurgeRun } = proxyActivities<Activities>({
  startToCloseTimeout: "5 minutes",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute", maximumAttempts: 5 },
});

/**
 * A workspace's purge heartbeats through its batches: a worker that dies (SIGKILL) misses its heartbeat,
 * and the next attempt, on any worker, takes up what is left. A workspace still failing after its
 * attempts is counted and left to the next hourly run; the others go on.
 */
const { purgeWorkspace } = proxyActivities<Activities>({
  startToCloseTimeout: "2 hours",
  heartbeatTimeout: "30 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "1 minute", maximumAttempts: 3 },
});

/** Workspaces per run before continuing as new, so the history stays small however many there are. */
const workspacesPerRun = 500;

/** What a run hands the next when it continues as new. */
export interface PurgeCarry {
  summary: PurgeRunSummary;
  left: ExpiredWorkspace[];
}

/**
 * D41: the run the hourly Schedule `flowlog-retention` starts (retention-schedule.ts). Finds the
 * workspaces with expired entries, purges them one at a time, and records the run once at its end.
 */
export async function purgeExpiredLogs(carry?: PurgeCarry): Promise<PurgeRunSummary> {
  let summary: PurgeRunSummary;
  let left: ExpiredWorkspace[];
  if (carry) {
    ({ summary, left } = carry);
  } else {
    const found = await expiredWorkspaces();
    summary = { startedAt: found.startedAt, workspaces: found.workspaces.length, entries: 0, failed: 0 };
    left = found.workspaces;
  }
  for (const [index, workspace] of left.entries()) {
    if (index === workspacesPerRun) {
      return continueAsNew<typeof purgeExpiredLogs>({ summary, left: left.slice(index) });
    }
    try {
      summary.entries += (await purgeWorkspace(workspace)).entries;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      summary.failed += 1;
    }
  }
  await recordPurgeRun(summary);
  return summary;
}
