import {
  oldestBeforeSql,
  oneSettingSql,
  type RetentionSettingRecord,
  type RetentionStore,
  setSettingSql,
  settingsOf,
  settingsPageSql,
} from "../retention-store.js";
import type { StoreArea } from "../store.js";
import type { PostgresPool } from "./database.js";
import { namedStatement } from "./named-parameters.js";

const one = namedStatement(oneSettingSql);
const page = namedStatement(settingsPageSql);
const set = namedStatement(setSettingSql);
const oldest = namedStatement(oldestBeforeSql);

/** SQLite's RetentionStore on PostgreSQL (D32), with the same statements. */
export class PostgresRetentionStore implements StoreArea<RetentionStore> {
  constructor(private readonly pool: PostgresPool) {}

  async setting(workspaceId: string): Promise<RetentionSettingRecord | undefined> {
    return settingsOf((await this.pool.query(one({ workspaceId }))).rows)[0];
  }

  async settingsPage(after: string, limit: number): Promise<RetentionSettingRecord[]> {
    return settingsOf((await this.pool.query(page({ after, limit }))).rows);
  }

  async setRetentionDays(workspaceId: string, days: number | null): Promise<void> {
    await this.pool.query(set({ workspaceId, days }));
  }

  async oldestBefore(workspaceId: string, before: number): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ startedAt: number | null }>(oldest({ workspaceId, before }));
    return rows[0]?.startedAt ?? undefined;
  }
}
