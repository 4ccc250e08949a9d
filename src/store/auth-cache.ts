import type { Db } from "./database.js";

/** More entries than this and the cache starts over: it holds what one process's callers keep using. */
const maxEntries = 10_000;

/**
 * Keys and memberships as this process last read them (issue 13): each request needs both, and both
 * change rarely. The cache is checked before every use: `PRAGMA data_version` (no I/O) tells whether any
 * other connection committed since the last look; only then is the auth revision read, a counter that
 * every change to keys, users and memberships moves in its own transaction (migrations.ts). A revocation
 * or a removed member is therefore seen by the first request after it commits, in every process. Changes
 * made through this connection clear the cache themselves (`clear`), since they do not move data_version
 * here. Unknown keys are never cached: a new key works at once, and a bad one costs a lookup each time.
 *
 * Every read looks, a request's membership check too: it once reused its key lookup's look, but a request
 * may hold its body back for up to D27's body timeout between the two, and a member removed in that time
 * was admitted after the removal committed. A look costs one `PRAGMA data_version`, no I/O.
 */
export class AuthCache {
  private readonly dataVersion;
  private readonly revision;
  private seenDataVersion = -1;
  private seenRevision = -1;
  private readonly entries = new Map<string, unknown>();

  constructor(db: Db) {
    this.dataVersion = db.prepare("PRAGMA data_version").pluck();
    this.revision = db.prepare("SELECT n FROM auth_revision WHERE id = 1").pluck();
  }

  /** The cached value of `key`, or `read()`'s, kept when `keep` says so; the cache looks for changes first. */
  get<T>(key: string, read: () => T, keep: (value: T) => boolean = () => true): T {
    this.refresh();
    if (this.entries.has(key)) return this.entries.get(key) as T;
    const value = read();
    if (keep(value)) {
      if (this.entries.size >= maxEntries) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }

  clear(): void {
    this.entries.clear();
  }

  private refresh(): void {
    const dataVersion = this.dataVersion.get() as number;
    if (dataVersion === this.seenDataVersion) return;
    this.seenDataVersion = dataVersion;
    const revision = this.revision.get() as number;
    if (revision === this.seenRevision) return;
    this.seenRevision = revision;
    this.entries.clear();
  }
}
