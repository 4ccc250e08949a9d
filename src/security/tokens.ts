import { randomBytes } from "node:crypto";
import { sha256 } from "../util/sha256.js";

/** A bearer secret: a recognisable prefix and 32 random bytes in base64url (D5). */
export function newSecretToken(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}

/** Only this hash of a bearer secret is stored: a leaked database yields no usable token (D5). */
export function hashToken(token: string): Buffer {
  return sha256(token);
}
