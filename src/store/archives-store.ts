import type { Db } from "./database.js";

/** A workspace-day written to the archive and read back (D42): what the purge may delete after. */
export interface ArchiveRecord {
  workspaceId: string;
  /** The UTC day of the entries' startedAt, yyyy-mm-dd. */
  day: string;
  /** Where the object is: file:///… or s3://bucket/key. */
  objectUrl: string;
  entries: number;
  bytes: number;
  /** Of the object's bytes, lowercase hex. */
  sha256: string;
  writtenAt: number;
}

export interface ArchiveRow {
  workspace_id: string;
  day: string;
  object_url: string;
  entries: number;
  bytes: number;
  sha256: string;
  written_at: number;
}

/** The archive's catalogue (D42): one row per workspace-day, written once its object is verified. */
export class ArchivesStore {
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      get: db.prepare(archiveByDaySql),
      record: db.prepare(upsertArchiveSql),
    };
  }

  async get(workspaceId: string, day: string): Promise<ArchiveRecord | undefined> {
    const row = this.statements.get.get({ workspaceId, day }) as ArchiveRow | undefined;
    return row && archiveFromRow(row);
  }

  /** Records a verified object; the same workspace-day written again (the same name) replaces its row. */
  async record(archive: ArchiveRecord): Promise<void> {
    this.statements.record.run(archive);
  }
}

/* Both stores' statements, with `@name` parameters (postgres/named-parameters.ts). */
export const archiveByDaySql = "SELECT * FROM archives WHERE workspace_id = @workspaceId AND day = @day";

export const upsertArchiveSql = `INSERT INTO archives (workspace_id, day, object_url, entries, bytes, sha256, written_at)
  VALUES (@workspaceId, @day, @objectUrl, @entries, @bytes, @sha256, @writtenAt)
  ON CONFLICT (workspace_id, day) DO UPDATE SET object_url = excluded.object_url, entries = excluded.entries,
    bytes = excluded.bytes, sha256 = excluded.sha256, written_at = excluded.written_at`;

export function archiveFromRow(row: ArchiveRow): ArchiveRecord {
  return {
    workspaceId: row.workspace_id,
    day: row.day,
    objectUrl: row.object_url,
    entries: Number(row.entries),
    bytes: Number(row.bytes),
    sha256: row.sha256,
    writtenAt: Number(row.written_at),
  };
}
