import { isSqliteBusy } from "../errors/sqlite-busy.js";
import type { Db } from "./database.js";

interface Queued {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Small writes asked for in one turn of the event loop, committed by one transaction (issue 13). Every
 * API request takes a token (D11): on its own, each take is a transaction of its own, and a commit in WAL
 * mode costs eight system calls (six `fcntl` locks, two `pwrite`s) whatever it writes: two thirds of a
 * take's cost alone, more under load. A busy server reads many requests in one turn; their takes wait for
 * the turn's end (`setImmediate`, after every socket the turn read) and commit together, in the order they
 * were asked for. SQLite runs them one after the other under one write lock, so each still sees the bucket
 * as the one before left it, and other processes' transactions come before or after the whole group: B of
 * B+k concurrent takes still pass, exactly. Each promise settles once the group has committed. If the
 * lock is not granted (another process holding it past the busy timeout), every write of the group fails
 * with that error and none is kept. If one write fails (a constraint, a full disk on a new bucket's row),
 * the group is rolled back and each of its writes is run again in a transaction of its own, so each is
 * answered by its own outcome: one write's fault is not its neighbours'.
 */
export class GroupCommit {
  private queue: Queued[] = [];
  private readonly writeAll;
  private readonly writeOne;

  constructor(db: Db) {
    this.writeAll = db.transaction((group: Queued[]) => group.map((queued) => queued.write()));
    this.writeOne = db.transaction((queued: Queued) => queued.write());
  }

  /** Runs `write` in the next group's transaction; resolves with what it returned, once committed. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (this.queue.length === 1) setImmediate(() => this.commit());
    });
  }

  private commit(): void {
    const group = this.queue;
    this.queue = [];
    let results: unknown[];
    try {
      // IMMEDIATE: the write lock is taken (or waited for) before the first write, not upgraded midway.
      results = this.writeAll.immediate(group);
    } catch (error) {
      // The lock not granted: running each write alone would wait the busy timeout out again, each.
      if (group.length === 1 || isSqliteBusy(error)) {
        for (const queued of group) queued.reject(error);
        return;
      }
      // One write failed and took the group's transaction with it: nothing was kept, so each is run alone,
      // until the lock is lost to another process (the rest then fail with that, as a group would).
      let busy: unknown;
      for (const queued of group) {
        if (busy !== undefined) {
          queued.reject(busy);
          continue;
        }
        try {
          queued.resolve(this.writeOne.immediate(queued));
        } catch (own) {
          if (isSqliteBusy(own)) busy = own;
          queued.reject(own);
        }
      }
      return;
    }
    for (const [index, queued] of group.entries()) queued.resolve(results[index]);
  }
}
