import { type DatabasePool, defaultDatabasePool, defaultQuotas, type Quotas } from "../../limits/quotas.js";
import type { Store } from "../store.js";
import { PostgresAccountsStore } from "./accounts-store.js";
import { PostgresAlertsStore } from "./alerts-store.js";
import { PostgresArchivesStore } from "./archives-store.js";
import { openPostgres } from "./database.js";
import { PostgresDeliveriesStore } from "./deliveries-store.js";
import { PostgresEndpointHealthStore } from "./endpoint-health-store.js";
import { PostgresEnvironmentStore } from "./environment-store.js";
import { PostgresHoldsStore } from "./holds-store.js";
import { PostgresInactivityStore } from "./inactivity-store.js";
import { PostgresLogDeletionStore } from "./log-deletion-store.js";
import { PostgresLogsStore } from "./logs-store.js";
import { PostgresOutboxStore } from "./outbox-store.js";
import { PostgresParkedOutputsStore } from "./parked-outputs-store.js";
import { PostgresRateLimitStore } from "./rate-limit-store.js";
import { PostgresRetentionStore } from "./retention-store.js";
import { PostgresSubscriptionsStore } from "./subscriptions-store.js";
import { TenantReads } from "./tenant-reads.js";
import { PostgresTriggersStore } from "./triggers-store.js";
import { PostgresUsageStore } from "./usage-store.js";
import { PostgresWorkflowsStore } from "./workflows-store.js";

export interface PostgresStoreOptions {
  /** Stop at an older schema version, for tests that build the database an older flowlog left. */
  schemaVersion?: number;
  /** D46: the two pools' sizes; their defaults when unset. */
  pool?: DatabasePool;
  /** D46: the tenant reads' time limits; their defaults when unset. */
  reads?: Pick<Quotas["reads"], "statementTimeoutMs" | "statsTimeoutMs">;
}

/**
 * The store on the PostgreSQL database `url` names (D32), migrated and reachable before it is returned:
 * the same areas as SQLite's, on two pools per process (D46): lists and stats, which grow with a
 * tenant's data, on one under a statement timeout, everything else on the other. `masterKey` seals
 * secrets as on SQLite; every process of the database must hold the same one.
 */
export async function openPostgresStore(
  url: string,
  masterKey: Buffer,
  options: PostgresStoreOptions = {},
): Promise<Store> {
  const sizes = options.pool ?? defaultDatabasePool;
  const limits = options.reads ?? defaultQuotas.reads;
  const pool = await openPostgres(url, {
    maxConnections: sizes.connections,
    schemaVersion: options.schemaVersion,
  });
  const reads = await openPostgres(url, {
    maxConnections: sizes.tenantReadConnections,
    statementTimeoutMs: limits.statementTimeoutMs,
    migrate: false,
  }).catch(async (error: unknown) => {
    await pool.end();
    throw error;
  });
  const tenantReads = new TenantReads(reads, pool, limits);
  const endpointHealth = new PostgresEndpointHealthStore(pool);
  const holds = new PostgresHoldsStore(pool);
  return {
    accounts: new PostgresAccountsStore(pool),
    workflows: new PostgresWorkflowsStore(pool, tenantReads),
    environment: new PostgresEnvironmentStore(pool, masterKey),
    triggers: new PostgresTriggersStore(pool),
    logs: new PostgresLogsStore(pool, tenantReads),
    logDeletion: new PostgresLogDeletionStore(pool, tenantReads),
    retention: new PostgresRetentionStore(pool),
    outbox: new PostgresOutboxStore(pool),
    parkedOutputs: new PostgresParkedOutputsStore(pool),
    rateLimits: new PostgresRateLimitStore(pool),
    usage: new PostgresUsageStore(pool),
    notifications: new PostgresSubscriptionsStore(pool, masterKey),
    deliveries: new PostgresDeliveriesStore(pool, endpointHealth, holds, tenantReads),
    endpointHealth,
    holds,
    inactivity: new PostgresInactivityStore(pool),
    alerts: new PostgresAlertsStore(pool),
    archives: new PostgresArchivesStore(pool),
    ping: async () => {
      await pool.query("SELECT 1");
    },
    close: async () => {
      await Promise.all([pool.end(), reads.end()]);
    },
  };
}
