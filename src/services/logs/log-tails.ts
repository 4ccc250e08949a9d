import { Code, ConnectError } from "@connectrpc/connect";
import { toPublicError } from "../../errors/public-error.js";
import { KeyedCount } from "../../limits/keyed-count.js";
import { logger } from "../../logging/logger.js";
import type { LogFilter } from "../../store/log-list-sql.js";
import {
  comparePositions,
  type TailEntry,
  type TailHorizon,
  type TailPosition,
  type TailRequest,
} from "../../store/log-tail-sql.js";
import type { Store } from "../../store/store.js";

/** How many entries one read of a tail takes. */
const pageSize = 100;

/** D44: a tail with this many entries read and not yet taken by its client is ended. */
export const maxBufferedEntries = 1_000;

/** How soon a horizon that a notified write has not passed yet (an older transaction still runs) is read again. */
const settleRetryMs = 20;

/** How soon a failed read of the horizon is tried again. */
const failedReadRetryMs = 1_000;

/** What one tail reads: its workspace's entries that pass its filters, with the columns it shows. */
export interface TailSubject {
  userId: string;
  filter: LogFilter;
  read: Pick<TailRequest, "withCostDetail" | "withTraceSpans" | "withFinalOutput">;
  /** Where a resumed tail continues; a new one starts at the horizon. */
  resumeFrom?: TailPosition;
}

/**
 * D44: the open tails of this process and the one reader they share. The reader learns of writes from
 * the store (`store.logs.writes`: SQLite's change counter, PostgreSQL's notifications), reads how far
 * entries are settled (the horizon) and which workspaces were written to, and wakes only the tails of
 * those workspaces; each tail then reads its own filtered entries up to the horizon, in write order,
 * with the list's filters (log-tail-sql.ts). A tail costs nothing while its workspace is quiet.
 */
export class LogTails {
  /** The open tails, each with the release of its user's slot. */
  private readonly tails = new Map<Tail, () => void>();
  private readonly perUser = new KeyedCount();
  private readonly reads = new Map<string, Promise<TailEntry[]>>();
  private horizon: TailHorizon | undefined;
  private started: Promise<void> | undefined;
  private stopWatching: (() => void) | undefined;
  private reading = false;
  private again = false;
  /** The largest xid a notification named that the horizon has not passed yet (PostgreSQL). */
  private awaited: bigint | undefined;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly store: Pick<Store, "logs">) {}

  /**
   * Opens a tail for `subject`, or refuses it with resource_exhausted when its user holds `maxOpen`
   * already. The tail counts against the user until it is closed.
   */
  async open(subject: TailSubject, maxOpen: number): Promise<Tail> {
    if (this.perUser.of(subject.userId) >= maxOpen) {
      throw new ConnectError(
        `at most ${maxOpen} log tails of one user are open at once on this plan (D44 openTails); close one first`,
        Code.ResourceExhausted,
      );
    }
    const release = this.perUser.take(subject.userId);
    try {
      await this.start();
    } catch (error) {
      release();
      throw error;
    }
    const tail = new Tail(this, subject, this.horizon as TailHorizon);
    this.tails.set(tail, release);
    if (subject.resumeFrom) tail.wake();
    return tail;
  }

  /** Ends every open tail with `unavailable` (the server is stopping): each client resumes elsewhere. */
  endAll(): void {
    const stopping = new ConnectError(
      "the server is stopping; resume with the last resume token",
      Code.Unavailable,
    );
    for (const tail of this.tails.keys()) tail.fail(stopping);
  }

  /** @internal The horizon the tails read up to. */
  currentHorizon(): TailHorizon {
    return this.horizon as TailHorizon;
  }

  /**
   * @internal One read per distinct question at a time: the tails of a workspace woken together that
   * share their filters and stand at the same position (most of them: they had all read up to the last
   * horizon) ask the same, and share the one answer, which none of them changes.
   */
  readTail(filter: LogFilter, request: TailRequest): Promise<TailEntry[]> {
    const key = JSON.stringify([filter, request]);
    let read = this.reads.get(key);
    if (!read) {
      read = this.store.logs.tail(filter, request);
      this.reads.set(key, read);
      const forget = () => this.reads.delete(key);
      read.then(forget, forget);
    }
    return read;
  }

  /** @internal Called by a tail as it closes. */
  closed(tail: Tail): void {
    const release = this.tails.get(tail);
    if (!release) return;
    this.tails.delete(tail);
    release();
    if (this.tails.size > 0) return;
    // No tail left: the process stops watching, and reads the horizon afresh for the next one.
    this.stopWatching?.();
    this.stopWatching = undefined;
    this.started = undefined;
    this.horizon = undefined;
    this.awaited = undefined;
    clearTimeout(this.retry);
    this.retry = undefined;
  }

  /** Watches before reading the first horizon, so that no write falls between the two. */
  private start(): Promise<void> {
    this.started ??= (async () => {
      this.stopWatching = this.store.logs.writes.watch((writtenBy) => this.changed(writtenBy));
      try {
        this.horizon = (await this.store.logs.writesSince(undefined)).horizon;
      } catch (error) {
        this.stopWatching();
        this.stopWatching = undefined;
        this.started = undefined;
        throw error;
      }
    })();
    return this.started;
  }

  private changed(writtenBy: string | undefined): void {
    if (writtenBy !== undefined && /^[0-9]+$/.test(writtenBy)) {
      const xid = BigInt(writtenBy);
      if (this.awaited === undefined || xid > this.awaited) this.awaited = xid;
    }
    void this.advance();
  }

  /** Reads the new horizon and wakes the tails of the workspaces written to; one read at a time. */
  private async advance(): Promise<void> {
    if (this.horizon === undefined) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        const before: TailHorizon | undefined = this.horizon;
        if (before === undefined) return;
        const { horizon, workspaceIds } = await this.store.logs.writesSince(before);
        if (this.horizon !== before || comparePositions(horizon, before) <= 0) continue;
        this.horizon = horizon;
        const written = new Set(workspaceIds);
        for (const tail of this.tails.keys())
          tail.advanced(before, horizon, written.has(tail.subject.filter.workspaceId));
      } while (this.again);
      if (this.awaited !== undefined && this.horizon && BigInt(this.horizon.xid) <= this.awaited) {
        this.later(settleRetryMs);
      } else {
        this.awaited = undefined;
      }
    } catch (error) {
      logger.warn({ err: error }, "the log tails could not read the store; trying again");
      this.later(failedReadRetryMs);
    } finally {
      this.reading = false;
    }
  }

  private later(ms: number): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.advance();
    }, ms);
    this.retry.unref();
  }
}

/**
 * One open tail: the entries read for it and not yet taken, and where its reads stand. A live tail (it
 * has read up to the horizon once) reads each new batch at once and is ended when `maxBufferedEntries`
 * wait for its client; a resumed tail catching up reads a page when its client has taken the last, so
 * a far-behind token is followed at the client's pace rather than ended.
 */
export class Tail {
  /** Entries read and not yet taken, in write order. */
  private readonly queue: TailEntry[] = [];
  /** How far this tail has read: every entry of its up to here is in the queue or was taken. */
  private position: TailPosition;
  private live: boolean;
  private reading = false;
  private pending = false;
  private failure: ConnectError | undefined;
  private notify: (() => void) | undefined;

  constructor(
    private readonly tails: LogTails,
    readonly subject: TailSubject,
    horizon: TailHorizon,
  ) {
    this.position = subject.resumeFrom ?? horizon;
    this.live = subject.resumeFrom === undefined;
  }

  /**
   * The next entries for the client (at most a page), or none when `waitMs` passed without any (a
   * heartbeat is due). Rejects with the error the tail ended with.
   */
  async next(waitMs: number, signal: AbortSignal): Promise<TailEntry[]> {
    if (this.queue.length === 0 && !this.failure) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, waitMs);
        signal.addEventListener("abort", done, { once: true });
        this.notify = done;
        function done() {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          resolve();
        }
      });
      this.notify = undefined;
    }
    if (this.failure) throw this.failure;
    const taken = this.queue.splice(0, pageSize);
    // A tail catching up reads its next page once the client has taken what it had.
    if (!this.live && this.pending && this.queue.length === 0) void this.read();
    return taken;
  }

  /** Where a client that took everything so far resumes: after the tail's read position. */
  resumePosition(): TailPosition | undefined {
    return this.queue.length === 0 ? this.position : undefined;
  }

  close(): void {
    this.queue.length = 0;
    this.tails.closed(this);
  }

  /** @internal The shared reader moved the horizon; `written`: this tail's workspace has new entries. */
  advanced(before: TailHorizon, horizon: TailHorizon, written: boolean): void {
    if (written) {
      this.wake();
      return;
    }
    // Nothing of this workspace up to the new horizon: an idle tail that had read up to the last one
    // stands at the new one, so its heartbeat's token skips what other workspaces wrote.
    if (!this.reading && !this.pending && comparePositions(this.position, before) >= 0) {
      this.position = horizon;
    }
  }

  /** @internal */
  wake(): void {
    this.pending = true;
    void this.read();
  }

  /**
   * @internal Ends the tail: the client's next call gets `error`. What was read for it is dropped and its
   * user's slot freed at once, while the client may still be reading what its socket holds.
   */
  fail(error: ConnectError): void {
    this.failure ??= error;
    this.queue.length = 0;
    this.tails.closed(this);
    this.notify?.();
  }

  private async read(): Promise<void> {
    if (this.reading || this.failure) return;
    this.reading = true;
    try {
      while (this.pending && !this.failure) {
        if (!this.live && this.queue.length > 0) return;
        this.pending = false;
        const upTo = this.tails.currentHorizon();
        if (!upTo) return;
        const entries = await this.tails.readTail(this.subject.filter, {
          ...this.subject.read,
          after: this.position,
          upTo,
          limit: pageSize,
        });
        this.queue.push(...entries);
        const last = entries.at(-1);
        if (entries.length === pageSize && last) {
          this.position = last.position;
          this.pending = true;
        } else {
          if (comparePositions(upTo, this.position) > 0) this.position = upTo;
          this.live = true;
        }
        if (this.live && this.queue.length >= maxBufferedEntries && this.pending) {
          this.fail(
            new ConnectError(
              `the client fell ${maxBufferedEntries} entries behind its log tail (D44); resume with the last resume token`,
              Code.ResourceExhausted,
            ),
          );
          return;
        }
        if (entries.length > 0) this.notify?.();
      }
    } catch (error) {
      this.fail(toPublicError(error, "log tail"));
    } finally {
      this.reading = false;
    }
  }
}
