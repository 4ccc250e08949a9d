import { hashToken, newSecretToken } from "../../security/tokens.js";

/** D5: `flk_` and 32 random bytes in base64url. */
const keyPattern = /^flk_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return newSecretToken("flk");
}

/** Only this hash is stored (D5): a leaked database yields no usable key. */
export function hashApiKey(key: string): Buffer {
  return hashToken(key);
}

/** Enough of the key to recognise it in a list, far too little to use it. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, 12);
}

export function looksLikeApiKey(value: string): boolean {
  return keyPattern.test(value);
}
