import { pipeline } from "node:stream/promises";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { Code, ConnectError } from "@connectrpc/connect";
import { invalidArgument } from "../errors/api-errors.js";
import { bodyOf, type NodeRequest } from "../rpc/node-http.js";

/** A body over the limit: 413 on the REST paths (D26), `resource_exhausted` as its code. */
export class BodyTooLarge extends ConnectError {
  /** ConnectError's own instanceof test accepts any ConnectError; this class means only its own instances. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(BodyTooLarge, value);
  }

  constructor(maxBytes: number) {
    super(
      `the request body exceeds ${maxBytes} bytes (after decompression), the most accepted`,
      Code.ResourceExhausted,
    );
  }
}

const decoders: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  br: createBrotliDecompress,
  deflate: createInflate,
};

/**
 * Reads a REST request's body, decompressing gzip, br or deflate (D29), and stops as soon as the decoded
 * bytes pass `maxBytes` (D26): a small compressed bomb is refused after reading one chunk past the limit,
 * never buffered whole. A declared Content-Length over the limit is refused before any byte is read.
 */
export async function readRequestBody(req: NodeRequest, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  const encoding = String(req.headers["content-encoding"] ?? "identity")
    .trim()
    .toLowerCase();
  if (encoding === "identity" && declared > maxBytes) throw new BodyTooLarge(maxBytes);
  const decoder = encoding === "identity" ? undefined : decoders[encoding];
  if (encoding !== "identity" && !decoder) {
    throw invalidArgument([
      { field: "content-encoding", message: "content-encoding must be gzip, br, deflate or identity" },
    ]);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // pipeline() rejects with its own error when the destination stops the decoder early, so the reason is kept.
  let tooLarge: BodyTooLarge | undefined;
  const collect = async (source: AsyncIterable<Buffer | string>) => {
    for await (const piece of source) {
      const chunk = typeof piece === "string" ? Buffer.from(piece) : piece;
      size += chunk.length;
      if (size > maxBytes) {
        tooLarge = new BodyTooLarge(maxBytes);
        throw tooLarge;
      }
      chunks.push(chunk);
    }
  };
  try {
    // Not the request itself: stopping early must leave it to the refusal's close, not destroy it (node-http.ts).
    const source = bodyOf(req);
    if (decoder) await pipeline(source, decoder(), collect);
    else await collect(source);
  } catch (error) {
    if (tooLarge) throw tooLarge;
    if (error instanceof ConnectError) throw error;
    throw invalidArgument([{ field: "body", message: `the body is not valid ${encoding} data` }]);
  }
  return Buffer.concat(chunks);
}
