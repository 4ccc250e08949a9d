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
function workspacePurges(heartbeatMs: number) {
  return proxyActivities<Activities>({
    startToCloseTimeout: "2 hours",
    heartbeatTimeout: heartbeatMs,
    retry: { initialInterval: "1 second", maximumInterval: "1 minute", maximumAttempts: 3 },
  }).purgeWorkspace;
}

/** Workspaces per run before continuing as new, so the history stays small however many there are. */
const workspacesPerRun = 500;

export interface PurgeInput {
  /** How soon a workspace's purge whose worker died is tried again; tests shorten it. */
  heartbeatMs?: number;
  /** What a run hands the next when it continues as new. */
  carry?: { summary: PurgeRunSummary; left: ExpiredWorkspace[] };
}

/**
 * D41: the run the hourly Schedule `flowlog-retention` starts (retention-schedule.ts). Finds the
 * workspaces with expired entries, purges them one at a time, and records the run once at its end.
 */
export async function purgeExpiredLogs({
  heartbeatMs = 10_000,
  carry,
}: PurgeInput = {}): Promise<PurgeRunSummary> {
  const purgeWorkspace = workspacePurges(heartbeatMs);
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
      return continueAsNew<typeof purgeExpiredLogs>({
        heartbeatMs,
        carry: { summary, left: left.slice(index) },
      });
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
