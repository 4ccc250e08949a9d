import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type Config, ConfigError } from "../config/config.js";

/**
 * Secrets at rest (D24): AES-256-GCM under the master key (D4). A sealed secret is IV (12 random bytes),
 * then the 16-byte tag, then the ciphertext. The context (what the secret belongs to, such as a workspace
 * and a variable name) is the additional authenticated data, so a ciphertext copied to another owner fails
 * to decrypt instead of leaking there.
 */
const keyBytes = 32;
const ivBytes = 12;
const tagBytes = 16;

/** Names what the secret belongs to (its context), never its value. */
export class SecretDecryptionError extends Error {
  constructor(context: readonly string[]) {
    super(`secret ${context.join("/")} could not be decrypted: the master key changed or it was moved`);
    this.name = "SecretDecryptionError";
  }
}

export function encryptSecret(key: Buffer, plaintext: string, context: readonly string[]): Buffer {
  const iv = randomBytes(ivBytes);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(contextBytes(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

export function decryptSecret(key: Buffer, sealed: Buffer, context: readonly string[]): string {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, ivBytes))
      .setAAD(contextBytes(context))
      .setAuthTag(sealed.subarray(ivBytes, ivBytes + tagBytes));
    return Buffer.concat([decipher.update(sealed.subarray(ivBytes + tagBytes)), decipher.final()]).toString(
      "utf8",
    );
  } catch {
    throw new SecretDecryptionError(context);
  }
}

/** JSON keeps the parts apart: ("ab", "c") and ("a", "bc") are different contexts. */
function contextBytes(context: readonly string[]): Buffer {
  return Buffer.from(JSON.stringify(context), "utf8");
}

/**
 * The master key: FLOWLOG_MASTER_KEY when set, else `<dataDir>/master.key`, generated with mode 0600 on
 * first start (D4). A bad key stops the process with a message naming where it came from, never the key.
 */
export function loadMasterKey(config: Pick<Config, "dataDir" | "masterKey">): Buffer {
  if (config.masterKey !== undefined) return parseKey(config.masterKey, "FLOWLOG_MASTER_KEY");
  const file = masterKeyFile(config.dataDir);
  return parseKey(readOrCreateKeyFile(file), file);
}

/**
 * The master key of processes that share a PostgreSQL database (D32), which must all hold the same one:
 * FLOWLOG_MASTER_KEY, or an existing `<dataDir>/master.key` (a store copied from SQLite keeps the key
 * that sealed its secrets). Never generated, as a key made on each machine would seal secrets no other
 * machine can open.
 */
export function loadSharedMasterKey(config: Pick<Config, "dataDir" | "masterKey">): Buffer {
  if (config.masterKey !== undefined) return parseKey(config.masterKey, "FLOWLOG_MASTER_KEY");
  const file = masterKeyFile(config.dataDir);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new ConfigError([
      "FLOWLOG_MASTER_KEY: must be set with FLOWLOG_DATABASE_URL, the same on every process of the " +
        "database (D4, D24); generate one with `openssl rand -base64 32`, or use a migrated store's master.key",
    ]);
  }
  return parseKey(text, file);
}

export function masterKeyFile(dataDir: string): string {
  return path.join(dataDir, "master.key");
}

function parseKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, "hex")
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed, "base64")
      : undefined;
  if (key?.length !== keyBytes) {
    throw new ConfigError([`${source}: must be a 32-byte key in base64 (44 characters) or hex (64 digits)`]);
  }
  return key;
}

/**
 * The API server, the worker and the CLI may start together on a fresh data dir: the key is written to a
 * private temporary file and linked into place, which fails if another process won the race; then
 * everyone reads the one key that was linked.
 */
function readOrCreateKeyFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(temporary, `${randomBytes(keyBytes).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
  return readFileSync(file, "utf8");
}
