import { randomBytes } from "node:crypto";

/** Opaque identifiers (spec: "Identifiers are opaque strings"), prefixed so a reader can tell them apart. */
export type IdKind = "usr" | "ws" | "key" | "log" | "ex" | "wf" | "fld" | "sch" | "sub" | "evt" | "dlv";

/** Twelve random bytes by default; a seeded source may supply its own for reproducible data. */
export function newId(kind: IdKind, bytes: Buffer = randomBytes(12)): string {
  return `${kind}_${bytes.toString("base64url")}`;
}
