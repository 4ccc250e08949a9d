import type { Db } from "./database.js";
import type { Plan } from "./records.js";

/** What D41's window of a workspace is made of: its own choice and its members' plans (limits/retention.ts). */
export interface RetentionSettingRecord {
  workspaceId: string;
  /** The days the workspace chose; null when it follows its plan. */
  retentionDays: number | null;
  memberPlans: Plan[];
}

interface SettingRow {
  workspaceId: string;
  retentionDays: number | null;
  plan: Plan | null;
}

/**
 * One row per workspace of `workspaces` (a table or a subquery, as `w`) and member; a workspace without
 * members has one row with no plan.
 */
const settingsOfSql = (workspaces: string) => `SELECT w.id AS "workspaceId",
    w.retention_days AS "retentionDays", u.plan
  FROM ${workspaces} w LEFT JOIN memberships m ON m.workspace_id = w.id LEFT JOIN users u ON u.id = m.user_id`;

export const oneSettingSql = `${settingsOfSql("workspaces")} WHERE w.id = @workspaceId`;
/** A page of workspaces in id order, after `@after`, with all their members whatever their number. */
export const settingsPageSql = `${settingsOfSql(
  "(SELECT id, retention_days FROM workspaces WHERE id > @after ORDER BY id LIMIT @limit)",
)} ORDER BY w.id`;
export const setSettingSql = "UPDATE workspaces SET retention_days = @days WHERE id = @workspaceId";
/** The oldest entry a window expires, along log_entries_by_time. */
export const oldestBeforeSql = `SELECT min(started_at) AS "startedAt" FROM log_entries
  WHERE workspace_id = @workspaceId AND started_at < @before`;

/** The rows of settingsSql, one record per workspace. */
export function settingsOf(rows: SettingRow[]): RetentionSettingRecord[] {
  const byWorkspace = new Map<string, RetentionSettingRecord>();
  for (const row of rows) {
    let setting = byWorkspace.get(row.workspaceId);
    if (!setting) {
      setting = { workspaceId: row.workspaceId, retentionDays: row.retentionDays, memberPlans: [] };
      byWorkspace.set(row.workspaceId, setting);
    }
    if (row.plan !== null) setting.memberPlans.push(row.plan);
  }
  return [...byWorkspace.values()];
}

/** D41's per-workspace setting, and what the purge asks of the store beside the deletion itself. */
export class RetentionStore {
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      one: db.prepare(oneSettingSql),
      page: db.prepare(settingsPageSql),
      set: db.prepare(setSettingSql),
      oldestBefore: db.prepare(oldestBeforeSql).pluck(),
    };
  }

  /** The workspace's setting and members' plans; undefined when there is no such workspace. */
  async setting(workspaceId: string): Promise<RetentionSettingRecord | undefined> {
    return settingsOf(this.statements.one.all({ workspaceId }) as SettingRow[])[0];
  }

  /**
   * The settings of up to `limit` workspaces after `after` in id order ("" for the first page), for the
   * purge: what one activity reads and answers stays bounded however many workspaces there are.
   */
  async settingsPage(after: string, limit: number): Promise<RetentionSettingRecord[]> {
    return settingsOf(this.statements.page.all({ after, limit }) as SettingRow[]);
  }

  /** Sets the days the workspace keeps its entries, or (null) goes back to its plan's. */
  async setRetentionDays(workspaceId: string, days: number | null): Promise<void> {
    this.statements.set.run({ workspaceId, days });
  }

  /** When the workspace's oldest entry that started before `before` started; undefined when none did. */
  async oldestBefore(workspaceId: string, before: number): Promise<number | undefined> {
    return (this.statements.oldestBefore.get({ workspaceId, before }) as number | null) ?? undefined;
  }
}
