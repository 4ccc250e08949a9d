import { Context } from "@temporalio/activity";
import { dayMs, retentionCutoff, utcDayStart, workspaceRetention } from "../../limits/retention.js";
import { logger as processLogger } from "../../logging/logger.js";
import { deleteInBatches, purgePause } from "../../store/log-deletion.js";
import type { ActivityDeps } from "./deps.js";
import { heartbeating } from "./heartbeating.js";

/** A workspace with entries past its window, and where the window starts. */
export interface ExpiredWorkspace {
  workspaceId: string;
  cutoffMs: number;
}

/** A page of the workspaces with expired entries (expiredWorkspaces). */
export interface ExpiredPage {
  /** When the page looked at the clock, ms. */
  now: number;
  workspaces: ExpiredWorkspace[];
  /** The last workspace id looked at, when more may follow. */
  next?: string;
}

export interface PurgeRunSummary {
  /** When the run looked at the clock, ms. */
  startedAt: number;
  workspaces: number;
  entries: number;
  /** Workspaces whose purge failed after its retries. */
  failed: number;
}

/**
 * D41's purge, whose workflow (purge-expired-logs.ts) only orders these: which workspaces have expired
 * entries, each workspace's purge, and the run's record. A workspace is purged one UTC day at a time,
 * oldest first, each day in batches (deleteInBatches). With an archive (D42, `deps.archiveDay`), a day
 * is archived before any of it is deleted and only days wholly past the cutoff go, so a day's archive is
 * never written again with fewer entries; without one, entries go up to the cutoff itself.
 *
 * Nothing is remembered between attempts: the next batch is whatever expired entries are left, so an
 * attempt that dies (its worker killed) is taken up by the next attempt or run where it stopped.
 */
export function retentionActivities(deps: ActivityDeps) {
  const clock = deps.clock ?? Date.now;
  const log = deps.logger ?? processLogger;

  return {
    /**
     * Of the next `limit` workspaces after `after` in id order, those whose oldest entry is past their
     * window now, and the id to read the next page after (absent after the last page): an answer bounded
     * however many workspaces the deployment holds.
     */
    async expiredWorkspaces({ after, limit }: { after: string; limit: number }): Promise<ExpiredPage> {
      const now = clock();
      const settings = await deps.store.retention.settingsPage(after, limit);
      const workspaces: ExpiredWorkspace[] = [];
      for (const setting of settings) {
        const { days } = workspaceRetention(deps.planLimits, setting.memberPlans, setting.retentionDays);
        const cutoffMs = retentionCutoff(now, days);
        if (cutoffMs === undefined) continue;
        if ((await deps.store.retention.oldestBefore(setting.workspaceId, cutoffMs)) === undefined) continue;
        workspaces.push({ workspaceId: setting.workspaceId, cutoffMs });
      }
      const next = settings.length === limit ? settings.at(-1)?.workspaceId : undefined;
      return { now, workspaces, next };
    },

    /** Deletes the workspace's entries that started before the cutoff (whole days with an archive). */
    async purgeWorkspace({ workspaceId, cutoffMs }: ExpiredWorkspace): Promise<{ entries: number }> {
      let entries = 0;
      const context = Context.current();
      await heartbeating(
        () => context.heartbeat({ entries }),
        async () => {
          for (;;) {
            const oldest = await deps.store.retention.oldestBefore(workspaceId, cutoffMs);
            if (oldest === undefined || context.cancellationSignal.aborted) return;
            const day = utcDayStart(oldest);
            const dayEnd = day + dayMs;
            if (deps.archiveDay) {
              if (dayEnd > cutoffMs) return;
              await deps.archiveDay(workspaceId, day, context.cancellationSignal);
            }
            const until = deps.archiveDay ? dayEnd : Math.min(dayEnd, cutoffMs);
            const filter = { workspaceId, startedFrom: day, startedTo: until - 1 };
            await deleteInBatches(deps.store.logDeletion, filter, {
              pause: purgePause,
              signal: context.cancellationSignal,
              onBatch: (batch) => {
                entries += batch.entries;
                deps.metrics?.entriesPurged(batch.entries);
              },
            });
          }
        },
      );
      return { entries };
    },

    /** The run's one log line and its metrics. */
    async recordPurgeRun(summary: PurgeRunSummary): Promise<void> {
      const durationMs = Math.max(0, clock() - summary.startedAt);
      deps.metrics?.purgeRan(durationMs / 1000, summary.failed);
      log.info(
        { workspaces: summary.workspaces, entries: summary.entries, failed: summary.failed, durationMs },
        `retention purge: ${summary.entries} entries of ${summary.workspaces} workspaces deleted (D41)`,
      );
    },
  };
}
