/**
 * How many of something each key holds at once, and all keys together: the running calls of each user,
 * the attempts of each workspace. A key holding none is forgotten, so the map stays as small as what runs.
 */
export class KeyedCount {
  private readonly byKey = new Map<string, number>();
  private all = 0;

  /** What `key` holds now. */
  of(key: string): number {
    return this.byKey.get(key) ?? 0;
  }

  /** What all keys hold together. */
  get total(): number {
    return this.all;
  }

  /** Runs `work` with one more counted for `key` until it settles, answered or failed. */
  async holding<T>(key: string, work: () => Promise<T>): Promise<T> {
    const release = this.take(key);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /**
   * Counts one more for `key` until the returned release is called, for what outlives one promise (a
   * stream); a second call of the release counts nothing.
   */
  take(key: string): () => void {
    this.byKey.set(key, this.of(key) + 1);
    this.all++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.all--;
      const left = this.of(key) - 1;
      if (left === 0) this.byKey.delete(key);
      else this.byKey.set(key, left);
    };
  }
}
