import { randomBytes } from "node:crypto";

/** Opaque identifiers (spec: "Identifiers are opaque strings"), prefixed so a reader can tell them apart. */
export type IdKind = "usr" | "ws" | "key" | "log" | "ex" | "wf" | "fld";

export function newId(kind: IdKind): string {
  return `${kind}_${randomBytes(12).toString("base64url")}`;
}
