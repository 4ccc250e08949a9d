import type { Store } from "../store.js";
import { PostgresAccountsStore } from "./accounts-store.js";
import { PostgresAlertsStore } from "./alerts-store.js";
import { openPostgres, type PostgresOptions } from "./database.js";
import { PostgresDeliveriesStore } from "./deliveries-store.js";
import { PostgresEndpointHealthStore } from "./endpoint-health-store.js";
import { PostgresEnvironmentStore } from "./environment-store.js";
import { PostgresInactivityStore } from "./inactivity-store.js";
import { PostgresLogsStore } from "./logs-store.js";
import { PostgresOutboxStore } from "./outbox-store.js";
import { PostgresParkedOutputsStore } from "./parked-outputs-store.js";
import { PostgresRateLimitStore } from "./rate-limit-store.js";
import { PostgresSubscriptionsStore } from "./subscriptions-store.js";
import { PostgresTriggersStore } from "./triggers-store.js";
import { PostgresUsageStore } from "./usage-store.js";
import { PostgresWorkflowsStore } from "./workflows-store.js";

/**
 * The store on the PostgreSQL database `url` names (D32), migrated and reachable before it is returned:
 * the same areas as SQLite's, on one pool per process. `masterKey` seals secrets as on SQLite; every
 * process of the database must hold the same one.
 */
export async function openPostgresStore(
  url: string,
  masterKey: Buffer,
  options: PostgresOptions = {},
): Promise<Store> {
  const pool = await openPostgres(url, options);
  const endpointHealth = new PostgresEndpointHealthStore(pool);
  return {
    accounts: new PostgresAccountsStore(pool),
    workflows: new PostgresWorkflowsStore(pool),
    environment: new PostgresEnvironmentStore(pool, masterKey),
    triggers: new PostgresTriggersStore(pool),
    logs: new PostgresLogsStore(pool),
    outbox: new PostgresOutboxStore(pool),
    parkedOutputs: new PostgresParkedOutputsStore(pool),
    rateLimits: new PostgresRateLimitStore(pool),
    usage: new PostgresUsageStore(pool),
    notifications: new PostgresSubscriptionsStore(pool, masterKey),
    deliveries: new PostgresDeliveriesStore(pool, endpointHealth),
    endpointHealth,
    inactivity: new PostgresInactivityStore(pool),
    alerts: new PostgresAlertsStore(pool),
    ping: async () => {
      await pool.query("SELECT 1");
    },
    close: () => pool.end(),
  };
}
