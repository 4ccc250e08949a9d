/**
 * A unary answer's body: its one chunk (or none). Connect's types take a body as an async iterable, and
 * this is one; node-exchange.ts writes it without iterating (`chunk`). Connect's `createAsyncIterable`
 * is a down-levelled async generator delegating with `yield*`, and reading one chunk through it cost a
 * busy server about 140 µs of CPU per 100-entry page and raised the page's p99 from 16 to 23 ms (the
 * gateway bench, issue 13). A class, so that no closure is made (and named, unary-context.ts) per answer.
 */
export class OneChunk implements AsyncIterable<Uint8Array> {
  constructor(readonly chunk: Uint8Array | undefined) {}

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return new OneChunkIterator(this.chunk);
  }
}

class OneChunkIterator implements AsyncIterator<Uint8Array> {
  constructor(private chunk: Uint8Array | undefined) {}

  next(): Promise<IteratorResult<Uint8Array>> {
    const value = this.chunk;
    this.chunk = undefined;
    return Promise.resolve(value === undefined ? { done: true, value: undefined } : { done: false, value });
  }

  return(): Promise<IteratorResult<Uint8Array>> {
    this.chunk = undefined;
    return Promise.resolve({ done: true, value: undefined });
  }
}

export function oneChunk(chunk: Uint8Array | undefined): OneChunk {
  return new OneChunk(chunk);
}
