import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import {
  type AutoDisablePolicy,
  autoDisablePolicyOf,
  defaultAutoDisableSettings,
} from "../domain/auto-disable.js";
import { defaultHoldSettings, type HoldBounds, holdBoundsOf } from "../domain/hold-policy.js";
import { defaultPlanLimits, type Plan, type PlanTable, plans } from "../limits/plans.js";
import {
  type ConnectionLimits,
  type ConnectionLimitsOverride,
  connectionLimitsOverride,
  type DatabasePool,
  type DatabasePoolOverride,
  databasePoolOverride,
  defaultConnectionLimits,
  defaultDatabasePool,
  defaultQuotas,
  type Quotas,
  type QuotasOverride,
  quotasOverride,
  withOverride,
} from "../limits/quotas.js";
import { trustedProxies } from "../security/trusted-proxies.js";
import { type ArchiveTarget, archiveSettings } from "./archive-settings.js";
import { jsonText, positiveInteger, strictObject } from "./json-settings.js";

/**
 * What a worker process runs (issue 51): the executions' task queue (executions, their blocks), the
 * deliveries' (everything of notifications), or both, so that a deployment scales each apart.
 */
export const workerRoles = ["executions", "deliveries"] as const;
export type WorkerRole = (typeof workerRoles)[number];

/**
 * Process configuration from environment variables (D4), validated once at start so a
 * bad value stops the process with a message naming the variable.
 */
export interface Config {
  port: number;
  /** D46: the address the API (and `flowlog worker`'s probes) listen on; unset, every interface. */
  host: string | undefined;
  /** Issue 16: the port of `flowlog worker`'s probes and metrics. */
  workerPort: number;
  /** Issue 51: the task queues `flowlog worker` polls; both by default (`flowlog dev` always runs both). */
  workerRoles: WorkerRole[];
  /**
   * Issue 51: the delivery-queue activities one worker starts per second at most (its pace); unset, none
   * beyond its slots (worker-slots.ts) and D26's per-workspace share of them.
   */
  workerDeliveriesPerSecond: number | undefined;
  /**
   * D46: a port of the API process's own for /healthz, /readyz and /metrics, open to whoever reaches it,
   * as `flowlog worker`'s is; unset, none (the API port answers them to the operator token or a trusted proxy).
   */
  probePort: number | undefined;
  /** D46: the address both processes' probe ports listen on: loopback unless an orchestrator needs more. */
  probeHost: string;
  dataDir: string;
  /**
   * D32: a postgres:// URL selects the PostgreSQL store; unset, the SQLite file in dataDir. Checked when
   * the store opens, whose error masks the password.
   */
  databaseUrl: string | undefined;
  publicBaseUrl: string;
  /** Existing Temporal frontend; when unset, `flowlog dev` starts a dev server (D3). */
  temporalAddress: string | undefined;
  temporalNamespace: string;
  /**
   * The task queue this deployment's executions run on; its deliveries' queue is derived from it
   * (task-queue.ts). Deployments sharing a namespace keep apart by it, each with its own retention Schedule.
   * Unset, FLOWLOG_TASK_QUEUE's default, `flowlog`.
   */
  taskQueue: string | undefined;
  /**
   * Issue 17: where operators open the Temporal Web UI, for the console's link to each execution; unset, the
   * console shows none. `flowlog dev` fills it with its dev server's UI.
   */
  temporalUiUrl: string | undefined;
  /** D29: answers are compressed only from this many bytes, and only when the client accepts it. */
  compressMinBytes: number;
  /** Where `flowlog dev`'s Temporal dev server keeps its state (issue 12): a file by default. */
  temporalDevDb: "file" | "memory";
  smtpUrl: string | undefined;
  mailFrom: string;
  /** Base64 or hex 32-byte key; generated into the data dir when absent (D4, D24). */
  masterKey: string | undefined;
  allowPrivateNetworks: boolean;
  /** Issue 16: peers whose X-Forwarded-For names the client, for D26's per-address throttle. */
  trustedProxies: string[];
  /** Bearer token of the admin API; the admin API is disabled while it is unset (issue 3, item 2). */
  operatorToken: string | undefined;
  /** Every plan's API and execution buckets and usage limit: D12's defaults, FLOWLOG_PLAN_LIMITS over them. */
  planLimits: PlanTable;
  /** What one request, execution and workspace may consume: D26's defaults, FLOWLOG_QUOTAS over them. */
  quotas: Quotas;
  /** Connection timeouts and the connection cap: D27's defaults, FLOWLOG_CONNECTIONS over them. */
  connections: ConnectionLimits;
  /** PostgreSQL's two pools (D46): their defaults, FLOWLOG_DATABASE_POOL over them. */
  databasePool: DatabasePool;
  /** When a failing webhook or chat endpoint is disabled (D35): its defaults, FLOWLOG_AUTO_DISABLE over them. */
  autoDisable: AutoDisablePolicy;
  /** How much and how long a held endpoint keeps (D36): its defaults, FLOWLOG_HOLD over them. */
  hold: HoldBounds;
  /** D42: where each purged workspace-day is archived first (FLOWLOG_ARCHIVE_URL); unset, no archive. */
  archive: ArchiveTarget | undefined;
}

const booleanString = z
  .enum(["true", "false", "1", "0"], { error: "must be true, false, 1 or 0" })
  .transform((value) => value === "true" || value === "1");

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === "" ? undefined : value));

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

const bucketOverride = strictObject(
  { requestsPerMinute: positiveInteger.optional(), maxBurst: positiveInteger.optional() },
  "bucket setting",
).optional();

const planOverride = strictObject(
  {
    api: bucketOverride,
    syncExecutions: bucketOverride,
    asyncExecutions: bucketOverride,
    usageLimitUsd: z
      .number({ error: "must be a non-negative number" })
      .nonnegative("must be a non-negative number")
      .optional(),
    // D41: whole days, 0 for no limit.
    retentionDays: z
      .number({ error: "must be a whole number of days, 0 for no limit" })
      .int("must be a whole number of days, 0 for no limit")
      .nonnegative("must be a whole number of days, 0 for no limit")
      .optional(),
    openTails: positiveInteger.optional(),
  },
  "limit",
).optional();

/** FLOWLOG_PLAN_LIMITS: a deep-partial plan table, as JSON (D12: "all defaults are configurable"). */
const planLimitsOverride = jsonText.pipe(
  strictObject(Object.fromEntries(plans.map((plan) => [plan, planOverride])), "plan"),
);

type PlanLimitsOverride = Partial<Record<Plan, z.output<typeof planOverride>>>;

/** FLOWLOG_HOLD (D36): how many deliveries and how many whole hours a held endpoint keeps, each optional. */
const holdOverride = jsonText.pipe(
  strictObject(
    { maxDeliveries: positiveInteger.optional(), maxAgeHours: positiveInteger.optional() },
    "hold setting",
  ).transform((override) => withOverride(defaultHoldSettings, override)),
);

/** FLOWLOG_AUTO_DISABLE (D35): whole hours and a count, each optional; the notice must precede the limit. */
const autoDisableOverride = jsonText.pipe(
  strictObject(
    {
      failingHours: positiveInteger.optional(),
      noticeHours: positiveInteger.optional(),
      minFailures: positiveInteger.optional(),
    },
    "auto-disable setting",
  )
    .transform((override) => withOverride(defaultAutoDisableSettings, override))
    .refine((settings) => settings.noticeHours < settings.failingHours, {
      error: "noticeHours must be less than failingHours",
      path: ["noticeHours"],
    }),
);

const portNumber = z.coerce
  .number({ error: "must be a port number" })
  .int("must be a port number")
  .min(0, "must be from 0 to 65535")
  .max(65535, "must be from 0 to 65535");

/** A listening address: an IP address (`::` and `0.0.0.0` are every interface) or a host name. */
const listenAddress = z
  .string()
  .regex(/^[0-9A-Za-z.:-]+$/, "must be an IP address or a host name, e.g. 127.0.0.1");

/**
 * FLOWLOG_WORKER_ROLES: a comma-separated list of roles, each kept once in the order of `workerRoles`;
 * empty or unset, both.
 */
const workerRolesList = z
  .string()
  .transform((text) => text.split(",").map((entry) => entry.trim()))
  .superRefine((entries, context) => {
    for (const entry of entries) {
      if (!(workerRoles as readonly string[]).includes(entry)) {
        const expected = `must list ${workerRoles.join(", ")} or both, comma-separated`;
        context.addIssue({ code: "custom", message: `"${entry}" is not a role: ${expected}` });
      }
    }
  })
  .transform((entries) => workerRoles.filter((role) => entries.includes(role)));

const envSchema = z.object({
  PORT: portNumber.default(8080),
  HOST: optionalString.pipe(listenAddress.optional()),
  // Issue 16: where `flowlog worker` answers /healthz, /readyz and /metrics; 0 picks a free port.
  FLOWLOG_WORKER_PORT: portNumber.default(8081),
  FLOWLOG_WORKER_ROLES: optionalString.pipe(workerRolesList.optional()),
  FLOWLOG_WORKER_DELIVERY_PACE: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.coerce
      .number({ error: "must be a positive number of deliveries a second" })
      .positive("must be a positive number of deliveries a second")
      .optional(),
  ),
  FLOWLOG_PROBE_PORT: z.preprocess((value) => (value === "" ? undefined : value), portNumber.optional()),
  FLOWLOG_PROBE_HOST: listenAddress.default("127.0.0.1"),
  FLOWLOG_DATA_DIR: z.string().min(1, "must not be empty").default("./data"),
  FLOWLOG_DATABASE_URL: optionalString,
  FLOWLOG_PUBLIC_BASE_URL: httpUrl.optional(),
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().min(1, "must not be empty").default("default"),
  FLOWLOG_TASK_QUEUE: optionalString.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,100}$/, "must be 1 to 100 letters, digits, dots, dashes or underscores")
      .optional(),
  ),
  FLOWLOG_TEMPORAL_UI_URL: optionalString.pipe(httpUrl.optional()),
  FLOWLOG_COMPRESS_MIN_BYTES: z.coerce
    .number({ error: "must be a whole number of bytes" })
    .int("must be a whole number of bytes")
    .min(0, "must be at least 0")
    .default(65_536),
  FLOWLOG_TEMPORAL_DEV_DB: z.enum(["file", "memory"], { error: "must be file or memory" }).default("file"),
  FLOWLOG_SMTP_URL: z.url({ protocol: /^smtps?$/, error: "must be an smtp:// or smtps:// URL" }).optional(),
  FLOWLOG_MAIL_FROM: z.string().default("flowlog <flowlog@localhost>"),
  FLOWLOG_MASTER_KEY: optionalString,
  FLOWLOG_ALLOW_PRIVATE_NETWORKS: booleanString.default(false),
  // Issue 16: the load balancers whose X-Forwarded-For names the client (comma-separated IPs or CIDRs).
  FLOWLOG_TRUSTED_PROXIES: z
    .string()
    .default("")
    .transform((text) =>
      text
        .split(",")
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .superRefine((entries, context) => {
      try {
        trustedProxies(entries);
      } catch (error) {
        context.addIssue({ code: "custom", message: (error as Error).message });
      }
    }),
  // A short token could be guessed by an attacker who can reach the port.
  FLOWLOG_OPERATOR_TOKEN: optionalString.refine((value) => value === undefined || value.length >= 16, {
    error: "must be at least 16 characters",
  }),
  FLOWLOG_PLAN_LIMITS: optionalString.pipe(planLimitsOverride.optional()),
  FLOWLOG_QUOTAS: optionalString.pipe(jsonText.pipe(quotasOverride).optional()),
  FLOWLOG_CONNECTIONS: optionalString.pipe(jsonText.pipe(connectionLimitsOverride).optional()),
  FLOWLOG_DATABASE_POOL: optionalString.pipe(jsonText.pipe(databasePoolOverride).optional()),
  FLOWLOG_AUTO_DISABLE: optionalString.pipe(autoDisableOverride.optional()),
  FLOWLOG_HOLD: optionalString.pipe(holdOverride.optional()),
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
  const archive = archiveSettings(env);
  const problems = [...(parsed.error?.issues.flatMap(problemsOf) ?? []), ...archive.problems];
  if (!parsed.success || !("target" in archive)) throw new ConfigError(problems);
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    workerPort: e.FLOWLOG_WORKER_PORT,
    workerRoles: e.FLOWLOG_WORKER_ROLES ?? [...workerRoles],
    workerDeliveriesPerSecond: e.FLOWLOG_WORKER_DELIVERY_PACE,
    probePort: e.FLOWLOG_PROBE_PORT,
    probeHost: e.FLOWLOG_PROBE_HOST,
    dataDir: path.resolve(e.FLOWLOG_DATA_DIR),
    databaseUrl: e.FLOWLOG_DATABASE_URL,
    publicBaseUrl: (e.FLOWLOG_PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ""),
    temporalAddress: e.TEMPORAL_ADDRESS,
    temporalNamespace: e.TEMPORAL_NAMESPACE,
    taskQueue: e.FLOWLOG_TASK_QUEUE,
    temporalUiUrl: e.FLOWLOG_TEMPORAL_UI_URL?.replace(/\/+$/, ""),
    temporalDevDb: e.FLOWLOG_TEMPORAL_DEV_DB,
    compressMinBytes: e.FLOWLOG_COMPRESS_MIN_BYTES,
    smtpUrl: e.FLOWLOG_SMTP_URL,
    mailFrom: e.FLOWLOG_MAIL_FROM,
    masterKey: e.FLOWLOG_MASTER_KEY,
    allowPrivateNetworks: e.FLOWLOG_ALLOW_PRIVATE_NETWORKS,
    trustedProxies: e.FLOWLOG_TRUSTED_PROXIES,
    operatorToken: e.FLOWLOG_OPERATOR_TOKEN,
    planLimits: withOverrides(defaultPlanLimits, e.FLOWLOG_PLAN_LIMITS ?? {}),
    quotas: withOverride(defaultQuotas, e.FLOWLOG_QUOTAS as QuotasOverride | undefined),
    connections: withOverride(
      defaultConnectionLimits,
      e.FLOWLOG_CONNECTIONS as ConnectionLimitsOverride | undefined,
    ),
    databasePool: withOverride(
      defaultDatabasePool,
      e.FLOWLOG_DATABASE_POOL as DatabasePoolOverride | undefined,
    ),
    autoDisable: autoDisablePolicyOf(e.FLOWLOG_AUTO_DISABLE ?? defaultAutoDisableSettings),
    hold: holdBoundsOf(e.FLOWLOG_HOLD ?? defaultHoldSettings),
    archive: archive.target,
  };
}

/**
 * Issues carry the variable name, and inside FLOWLOG_PLAN_LIMITS the keys leading to the value, as their
 * path; values are never echoed (they may be secrets). Each unknown key is a problem at its own path.
 */
function problemsOf(issue: z.core.$ZodIssue): string[] {
  const at = (path: PropertyKey[]) => path.map(String).join(".");
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => `${at([...issue.path, key])}: ${issue.message}`);
  }
  return [`${at(issue.path)}: ${issue.message}`];
}

function withOverrides(defaults: PlanTable, overrides: PlanLimitsOverride): PlanTable {
  const table = { ...defaults };
  for (const plan of plans) {
    const base = defaults[plan];
    const override = overrides[plan] ?? {};
    table[plan] = {
      api: { ...base.api, ...override.api },
      syncExecutions: { ...base.syncExecutions, ...override.syncExecutions },
      asyncExecutions: { ...base.asyncExecutions, ...override.asyncExecutions },
      usageLimitUsd: override.usageLimitUsd ?? base.usageLimitUsd,
      retentionDays: override.retentionDays ?? base.retentionDays,
      openTails: override.openTails ?? base.openTails,
    };
  }
  return table;
}
