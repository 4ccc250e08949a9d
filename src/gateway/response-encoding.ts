import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";

const compressBrotli = promisify(brotliCompress);
const compressGzip = promisify(gzip);

/** The default D29 threshold: smaller answers cost more to compress than they save on loopback or a LAN. */
export const defaultCompressMinBytes = 65_536;

export type ResponseEncoding = "br" | "gzip";

/**
 * D29: the encoding of a REST answer of `size` bytes, or undefined to send it as it is: only when the
 * client accepts one (Accept-Encoding, q-values honoured, br preferred) and the body is at least `minBytes`.
 */
export function chooseEncoding(
  acceptEncoding: string | undefined,
  size: number,
  minBytes: number,
): ResponseEncoding | undefined {
  if (acceptEncoding === undefined || size < minBytes) return undefined;
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [name = "", ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (name !== "") accepted.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const weightOf = (name: ResponseEncoding) => accepted.get(name) ?? accepted.get("*") ?? 0;
  if (weightOf("br") > 0 && weightOf("br") >= weightOf("gzip")) return "br";
  if (weightOf("gzip") > 0) return "gzip";
  return undefined;
}

/** Compresses off the main thread (zlib's pool); brotli at a middle quality, as web servers serve dynamic text. */
export function encode(bytes: Uint8Array, encoding: ResponseEncoding): Promise<Buffer> {
  return encoding === "br"
    ? compressBrotli(bytes, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
      })
    : compressGzip(bytes);
}
