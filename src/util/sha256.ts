import { createHash } from "node:crypto";

/** 32 bytes of SHA-256 over the text's UTF-8: token hashes (D5) and stored states' content keys alike. */
export function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
