import { ActivityFailure, continueAsNew, proxyActivities } from "@temporalio/workflow";
// Types only: activity code never enters the deterministic workflow bundle.
import type { Activities } from "../activities/index.js";
import type { ExpiredPage, PurgeRunSummary } from "../activities/retention-activities.js";

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

/** Pages of workspaces per run before continuing as new, so the history stays small however many there are. */
const pagesPerRun = 5;

export interface PurgeInput {
  /** How soon a workspace's purge whose worker died is tried again; tests shorten it. */
  heartbeatMs?: number;
  /** Workspaces looked at per page (200); tests shorten it to see pages and runs follow each other. */
  workspacesPerPage?: number;
  /** What a run hands the next when it continues as new: its tally and the last workspace looked at. */
  carry?: { summary: PurgeRunSummary; after: string };
}

/**
 * D41: the run the hourly Schedule `flowlog-retention` starts (retention-schedule.ts). Goes through the
 * workspaces a page at a time, in id order, purges those with expired entries one at a time, and records
 * the run once at its end.
 */
export async function purgeExpiredLogs({
  heartbeatMs = 10_000,
  workspacesPerPage = 200,
  carry,
}: PurgeInput = {}): Promise<PurgeRunSummary> {
  const purgeWorkspace = workspacePurges(heartbeatMs);
  const pageAfter = (after: string) => expiredWorkspaces({ after, limit: workspacesPerPage });
  let found: ExpiredPage = await pageAfter(carry?.after ?? "");
  const summary = carry?.summary ?? { startedAt: found.now, workspaces: 0, entries: 0, failed: 0 };
  for (let page = 1; ; page++) {
    summary.workspaces += found.workspaces.length;
    for (const workspace of found.workspaces) {
      try {
        summary.entries += (await purgeWorkspace(workspace)).entries;
      } catch (error) {
        if (!(error instanceof ActivityFailure)) throw error;
        summary.failed += 1;
      }
    }
    if (found.next === undefined) break;
    if (page === pagesPerRun) {
      const next = { summary, after: found.next };
      return continueAsNew<typeof purgeExpiredLogs>({ heartbeatMs, workspacesPerPage, carry: next });
    }
    found = await pageAfter(found.next);
  }
  await recordPurgeRun(summary);
  return summary;
}
