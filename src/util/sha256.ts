import { hash } from "node:crypto";

/**
 * 32 bytes of SHA-256 over the text's UTF-8: token hashes (D5) and stored states' content keys alike.
 * One-shot `hash` (Node 20.12, the engines floor): every API request hashes its key, and a Hash object
 * per call cost about a quarter more (issue 13).
 */
export function sha256(text: string): Buffer {
  return hash("sha256", text, "buffer");
}
