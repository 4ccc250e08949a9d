import { OutboundFailure } from "./failure.js";

/**
 * How much of a reply is read (D26), counted on the decoded bytes as they stream, so a gzip or brotli bomb
 * costs at most the limit and never the size it claims to expand to. `beyond` says what a longer reply
 * means: a block must not go on with half an answer (`fail`), while a delivery answer is only a receipt
 * whose first kilobyte is logged (`cut`: the rest is left unread).
 */
export interface ReplyLimit {
  bytes: number;
  beyond: "fail" | "cut";
}

export interface CappedBody {
  bytes: Buffer;
  /** The reply went on past the limit and the rest was not read. */
  cut: boolean;
}

/** Reads `body` up to the limit, then cancels it, which closes the connection undici was reading it from. */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  limit: ReplyLimit,
): Promise<CappedBody> {
  if (!body) return { bytes: Buffer.alloc(0), cut: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks, size), cut: false };
      if (size + value.byteLength > limit.bytes) {
        if (limit.beyond === "fail") {
          throw new OutboundFailure("reply_too_large", `response body exceeds ${limit.bytes} bytes (D26)`);
        }
        chunks.push(value.subarray(0, limit.bytes - size));
        return { bytes: Buffer.concat(chunks, limit.bytes), cut: true };
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
