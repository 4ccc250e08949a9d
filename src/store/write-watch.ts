/**
 * D44: how a process learns that log entries may have been written, by any process on any machine the
 * store reaches. Listeners are called with nothing: they read the store to find out what. The watch runs
 * only while someone listens, and calls may be spurious (a write of another table) or merged (several
 * writes, one call); a reader that reads after each call misses nothing.
 */
export interface WriteWatch {
  /**
   * Calls `listener` after writes from now on, until the returned function is called. On PostgreSQL it
   * is given the writing transaction's xid when the call comes from its notification.
   */
  watch(listener: WriteListener): () => void;
}

export type WriteListener = (writtenBy?: string) => void;

/**
 * A watch that starts its source on the first listener and stops it after the last one left, so a
 * process with no tail open polls nothing.
 */
export class SharedWriteWatch implements WriteWatch {
  private readonly listeners = new Set<WriteListener>();
  private stop: (() => void) | undefined;

  /** `start` begins watching the source, calling its argument on writes; it returns how to stop. */
  constructor(private readonly start: (changed: WriteListener) => () => void) {}

  watch(listener: WriteListener): () => void {
    const own: WriteListener = (writtenBy) => listener(writtenBy);
    this.listeners.add(own);
    this.stop ??= this.start((writtenBy) => {
      for (const each of this.listeners) each(writtenBy);
    });
    return () => {
      this.listeners.delete(own);
      if (this.listeners.size > 0) return;
      this.stop?.();
      this.stop = undefined;
    };
  }
}
