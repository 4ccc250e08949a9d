import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/**
 * Process configuration from environment variables (D4), validated once at start so a
 * bad value stops the process with a message naming the variable.
 */
export interface Config {
  port: number;
  dataDir: string;
  publicBaseUrl: string;
  /** Existing Temporal frontend; when unset, `flowlog dev` starts a dev server (D3). */
  temporalAddress: string | undefined;
  temporalNamespace: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** Base64 or hex 32-byte key; generated into the data dir when absent (D4, D24). */
  masterKey: string | undefined;
  allowPrivateNetworks: boolean;
  /** Bearer token of the admin API; the admin API is disabled while it is unset (issue 3, item 2). */
  operatorToken: string | undefined;
}

const booleanString = z
  .enum(["true", "false", "1", "0"], { error: "must be true, false, 1 or 0" })
  .transform((value) => value === "true" || value === "1");

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === "" ? undefined : value));

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

const envSchema = z.object({
  PORT: z.coerce
    .number({ error: "must be a port number" })
    .int("must be a port number")
    .min(0, "must be from 0 to 65535")
    .max(65535, "must be from 0 to 65535")
    .default(8080),
  FLOWLOG_DATA_DIR: z.string().min(1, "must not be empty").default("./data"),
  FLOWLOG_PUBLIC_BASE_URL: httpUrl.optional(),
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().min(1, "must not be empty").default("default"),
  FLOWLOG_SMTP_URL: z.url({ protocol: /^smtps?$/, error: "must be an smtp:// or smtps:// URL" }).optional(),
  FLOWLOG_MAIL_FROM: z.string().default("flowlog <flowlog@localhost>"),
  FLOWLOG_MASTER_KEY: optionalString,
  FLOWLOG_ALLOW_PRIVATE_NETWORKS: booleanString.default(false),
  // A short token could be guessed by an attacker who can reach the port.
  FLOWLOG_OPERATOR_TOKEN: optionalString.refine((value) => value === undefined || value.length >= 16, {
    error: "must be at least 16 characters",
  }),
});

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Reads `.env` in the working directory (if any) into process.env without overriding set values. */
export function loadDotEnv(file = ".env"): void {
  if (existsSync(file)) process.loadEnvFile(file);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    // Issues carry the variable name as their path; values are never echoed (they may be secrets).
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`));
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    dataDir: path.resolve(e.FLOWLOG_DATA_DIR),
    publicBaseUrl: (e.FLOWLOG_PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ""),
    temporalAddress: e.TEMPORAL_ADDRESS,
    temporalNamespace: e.TEMPORAL_NAMESPACE,
    smtpUrl: e.FLOWLOG_SMTP_URL,
    mailFrom: e.FLOWLOG_MAIL_FROM,
    masterKey: e.FLOWLOG_MASTER_KEY,
    allowPrivateNetworks: e.FLOWLOG_ALLOW_PRIVATE_NETWORKS,
    operatorToken: e.FLOWLOG_OPERATOR_TOKEN,
  };
}
