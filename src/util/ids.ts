import { createHash, randomBytes } from "node:crypto";

/** Opaque identifiers (spec: "Identifiers are opaque strings"), prefixed so a reader can tell them apart. */
export type IdKind = "usr" | "ws" | "key" | "log" | "ex" | "wf" | "fld" | "sch" | "sub" | "evt" | "dlv";

/** Twelve random bytes by default; a seeded source may supply its own for reproducible data. */
export function newId(kind: IdKind, bytes: Buffer = randomBytes(12)): string {
  return `${kind}_${bytes.toString("base64url")}`;
}

/**
 * The id that follows from `key` (the first twelve bytes of its SHA-256): every retry or replay that
 * derives it names the same thing, so a second write of it is a no-op.
 */
export function derivedId(kind: IdKind, key: string): string {
  return newId(kind, createHash("sha256").update(key).digest().subarray(0, 12));
}
