import {
  type ArchiveRecord,
  type ArchiveRow,
  type ArchivesStore,
  archiveByDaySql,
  archiveFromRow,
  upsertArchiveSql,
} from "../archives-store.js";
import type { StoreArea } from "../store.js";
import type { PostgresPool } from "./database.js";
import { namedStatement } from "./named-parameters.js";

const byDay = namedStatement(archiveByDaySql);
const upsert = namedStatement(upsertArchiveSql);

/** The archive's catalogue (D42, D32): SQLite's ArchivesStore, the same statements. */
export class PostgresArchivesStore implements StoreArea<ArchivesStore> {
  constructor(private readonly pool: PostgresPool) {}

  async get(workspaceId: string, day: string): Promise<ArchiveRecord | undefined> {
    const { rows } = await this.pool.query<ArchiveRow>(byDay({ workspaceId, day }));
    return rows[0] && archiveFromRow(rows[0]);
  }

  async record(archive: ArchiveRecord): Promise<void> {
    await this.pool.query(upsert(archive));
  }
}
