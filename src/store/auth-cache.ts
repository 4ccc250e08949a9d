import type { Db } from "./database.js";

/** More entries than this and the cache starts over: it holds what one process's callers keep using. */
const maxEntries = 10_000;

/**
 * What a request's key lookup gives it (KeyOwner.looked): proof that this cache looked for changes on
 * the request's behalf, after the request arrived. The same request's later checks (its membership) pass
 * it back and are answered from the cache as of its latest look, which is no older, without a look of
 * their own (issue 13: one look per request, not two).
 */
export interface AuthLook {
  readonly lookedBy: AuthCache;
}

/**
 * Keys and memberships as this process last read them (issue 13): each request needs both, and both
 * change rarely. The cache is checked before every use: `PRAGMA data_version` (no I/O) tells whether any
 * other connection committed since the last look; only then is the auth revision read, a counter that
 * every change to keys, users and memberships moves in its own transaction (migrations.ts). A revocation
 * or a removed member is therefore seen by the first request after it commits, in every process. Changes
 * made through this connection clear the cache themselves (`clear`), since they do not move data_version
 * here. Unknown keys are never cached: a new key works at once, and a bad one costs a lookup each time.
 */
export class AuthCache {
  private readonly dataVersion;
  private readonly revision;
  private seenDataVersion = -1;
  private seenRevision = -1;
  private readonly entries = new Map<string, unknown>();
  /** Handed to whatever `get` answered, for the same request's later checks (AuthLook). */
  readonly looked: AuthLook = Object.freeze({ lookedBy: this });

  constructor(db: Db) {
    this.dataVersion = db.prepare("PRAGMA data_version").pluck();
    this.revision = db.prepare("SELECT n FROM auth_revision WHERE id = 1").pluck();
  }

  /**
   * The cached value of `key`, or `read()`'s, kept when `keep` says so. The cache looks for changes
   * first, unless `looked` shows that it did for the same request already (AuthLook).
   */
  get<T>(key: string, read: () => T, keep: (value: T) => boolean = () => true, looked?: AuthLook): T {
    if (looked?.lookedBy !== this) this.refresh();
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
