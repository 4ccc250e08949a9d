import type { z } from "zod";
import { positiveInteger, strictObject } from "../config/json-settings.js";

/**
 * What one request, one execution and one workspace may consume (D26), and how long a connection may take
 * to say what it wants (D27). Every figure is a product decision with a default here; FLOWLOG_QUOTAS and
 * FLOWLOG_CONNECTIONS override any of them (config/config.ts), so the rest of the code is handed these tables and
 * never spells a limit itself.
 */
export interface Quotas {
  /** A request body on any protocol, counted after decompression (D26, D29). */
  requestBodyBytes: number;
  /** Values in one list parameter (workflowIds, folderIds, triggers, ...). */
  listParameterValues: number;
  /** The longest range GET /api/v1/log-stats aggregates, in days (issue 17): hours read grow with it. */
  logStatsRangeDays: number;
  workflow: {
    /** Blocks in one workflow definition. */
    maxBlocks: number;
    /** Block runs in one execution, loop iterations and parallel branches counted at every depth. */
    maxBlockRuns: number;
    /**
     * The Temporal history an execution may build before its blocks with side effects stop (their outputs
     * and requests travel in it): under the server's `limit.historySize.error` (50 MiB by default), past which
     * Temporal terminates the execution before its entry is written (execute-workflow.ts).
     */
    maxHistoryBytes: number;
    /** Schedules of one workflow. */
    maxSchedules: number;
    /** The shortest interval between two runs of one schedule. */
    minScheduleIntervalSeconds: number;
  };
  /** Bounds on the HTTP-request block's own settings (D16), checked on save and again at run time. */
  httpBlock: {
    maxRetries: number;
    maxTimeoutMs: number;
    minRetryBaseMs: number;
    maxRetryMaxMs: number;
  };
  /**
   * The most a block's output may be, as JSON, for the execution to carry it on (block-activities.ts):
   * Temporal's server refuses a payload over 2 MiB by default. Below `replyBytes.block`, so a reply may be
   * read whole and still be too big to pass on.
   */
  blockOutputBytes: number;
  /** The most of a reply that is read, decoded: HTTP and agent blocks, and delivery answers. */
  replyBytes: {
    block: number;
    delivery: number;
  };
  workspace: {
    subscriptions: number;
    environmentVariables: number;
    environmentValueBytes: number;
    /** Block activities of one workspace running at once on one worker; the rest wait their turn. */
    concurrentBlockActivities: number;
    /** Delivery attempts of one workspace running at once on one worker; the rest wait their turn. */
    concurrentDeliveries: number;
  };
  /**
   * What all workspaces together may run on one worker, for block activities and for delivery attempts
   * alike, each in slots of their own (temporal/worker-slots.ts). At most 100, the worker's activity slots.
   */
  worker: {
    /**
     * Attempts running at once, first tries of HTTP blocks included; the rest of the 100 stay for the
     * executions' and fan-outs' own activities (log writes, the deliveries' preparation).
     */
    attemptSlots: number;
    /**
     * Of those, how many the workspaces already running some may hold together: the others go only to a
     * workspace running none, so several busy tenants cannot keep another waiting.
     */
    busyWorkspaceSlots: number;
  };
  /**
   * Failed deliveries one recovery job sends again (D37); a wider window's job takes the oldest this many,
   * and another, once it has ended, the rest. Bounds what one request sets in motion.
   */
  recoveryDeliveries: number;
  /** Failed authentications one client address may make per minute before it is refused with 429. */
  failedAuthenticationsPerMinute: number;
  /** How long a sync execution's caller waits before a 504 with the executionId (the run goes on). */
  syncExecutionDeadlineMs: number;
  /**
   * D46: what one tenant's reads may take of a process, so that no tenant can starve the others: every
   * store read that grows with a tenant's data runs under a time limit, and the log stats, the heaviest,
   * under a cap of calls at once, per user and per process, timed from when they start.
   */
  reads: {
    /** A list read's time limit (PostgreSQL's statement_timeout); past it, 504 naming what to narrow. */
    statementTimeoutMs: number;
    /** A stats call's time limit, on either store. */
    statsTimeoutMs: number;
    /** Stats calls one user may have running at once; the next is refused with 429 and Retry-After. */
    statsPerUser: number;
    /** Stats calls one process runs at once, all users together; the next is refused likewise. */
    statsPerProcess: number;
    /** D45: log exports one user may have streaming at once; the next is refused with 429. */
    exportsPerUser: number;
  };
}

export interface ConnectionLimits {
  /** A request's headers must arrive within this. */
  headersTimeoutMs: number;
  /** A request's whole body must arrive within this. */
  bodyTimeoutMs: number;
  /** An idle HTTP/1.1 keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** An HTTP/2 session with no activity is closed after this. */
  http2IdleTimeoutMs: number;
  /** A new connection must show which protocol it speaks within this. */
  protocolDetectionTimeoutMs: number;
  /** Open connections per process; more are closed at once. */
  maxConnections: number;
  /**
   * An HTTP/1.1 connection closed after an answer given before its request's body had all arrived (a
   * refusal, D28) reads and drops what the client still sends for at most this long before closing, so that
   * the client is not reset before it read the answer (RFC 9112 §9.6).
   */
  lingerMs: number;
}

const mebibyte = 1024 * 1024;

export const defaultQuotas: Quotas = {
  requestBodyBytes: mebibyte,
  listParameterValues: 100,
  logStatsRangeDays: 31,
  workflow: {
    maxBlocks: 200,
    maxBlockRuns: 1000,
    maxHistoryBytes: 40 * mebibyte,
    maxSchedules: 10,
    minScheduleIntervalSeconds: 60,
  },
  httpBlock: { maxRetries: 10, maxTimeoutMs: 120_000, minRetryBaseMs: 100, maxRetryMaxMs: 60_000 },
  blockOutputBytes: mebibyte,
  replyBytes: { block: 10 * mebibyte, delivery: 64 * 1024 },
  workspace: {
    subscriptions: 50,
    environmentVariables: 200,
    environmentValueBytes: 64 * 1024,
    concurrentBlockActivities: 20,
    concurrentDeliveries: 20,
  },
  worker: { attemptSlots: 90, busyWorkspaceSlots: 80 },
  recoveryDeliveries: 100_000,
  failedAuthenticationsPerMinute: 20,
  syncExecutionDeadlineMs: 5 * 60_000,
  reads: {
    statementTimeoutMs: 10_000,
    statsTimeoutMs: 30_000,
    statsPerUser: 2,
    statsPerProcess: 4,
    exportsPerUser: 2,
  },
};

/**
 * D46: the PostgreSQL connections one process keeps, in two pools so that one tenant's slow reads cannot
 * take the connections every other request needs: lists and stats (the reads that grow with a tenant's
 * data) have their own, and authentication, token buckets, single entries and every write keep theirs.
 */
export interface DatabasePool {
  /** Connections for everything but lists and stats (pg's default pool size). */
  connections: number;
  /** Connections for lists and stats; a read waiting for one past 10 s is answered 503. */
  tenantReadConnections: number;
}

export const defaultDatabasePool: DatabasePool = { connections: 10, tenantReadConnections: 6 };

export const defaultConnectionLimits: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  http2IdleTimeoutMs: 60_000,
  protocolDetectionTimeoutMs: 5_000,
  maxConnections: 1_000,
  lingerMs: 5_000,
};

type Table = { [key: string]: number | Table };
type DeepPartial<T> = { [K in keyof T]?: T[K] extends number ? number : DeepPartial<T[K]> };

/**
 * The override schema of a table: the same keys, each optional, every number a positive integer (a quota of
 * zero or less would refuse everything, which is what disabling a feature is for, not a quota). Derived from
 * the defaults, so a new quota needs no second declaration.
 */
export function overrideSchema(defaults: Table, what: string): z.ZodType<unknown> {
  const shape: Record<string, z.ZodType<unknown>> = {};
  for (const [key, value] of Object.entries(defaults)) {
    shape[key] = (typeof value === "number" ? positiveInteger : overrideSchema(value, what)).optional();
  }
  return strictObject(shape, what);
}

/** The defaults with an override laid over them, key by key at every depth. */
export function withOverride<T extends object>(defaults: T, override: DeepPartial<T> | undefined): T {
  if (!override) return defaults;
  const merged: Record<string, unknown> = { ...(defaults as Record<string, unknown>) };
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue;
    const base = (defaults as Record<string, unknown>)[key];
    merged[key] = typeof value === "object" ? withOverride(base as object, value as object) : value;
  }
  return merged as T;
}

export const quotasOverride = overrideSchema(defaultQuotas as unknown as Table, "quota");
export const connectionLimitsOverride = overrideSchema(
  defaultConnectionLimits as unknown as Table,
  "connection limit",
);
export const databasePoolOverride = overrideSchema(defaultDatabasePool as unknown as Table, "pool setting");
export type QuotasOverride = DeepPartial<Quotas>;
export type DatabasePoolOverride = DeepPartial<DatabasePool>;
export type ConnectionLimitsOverride = DeepPartial<ConnectionLimits>;
