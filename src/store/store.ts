import path from "node:path";
import { defaultQuotas, type Quotas } from "../limits/quotas.js";
import { loadMasterKey } from "../security/secrets.js";
import { AccountsStore } from "./accounts-store.js";
import { AlertsStore } from "./alerts-store.js";
import { ArchivesStore } from "./archives-store.js";
import { type Db, databaseFile, openDatabase } from "./database.js";
import { DeliveriesStore } from "./deliveries-store.js";
import { type EndpointHealthArea, EndpointHealthStore } from "./endpoint-health-store.js";
import { EnvironmentStore } from "./environment-store.js";
import { type HoldsArea, HoldsStore } from "./holds-store.js";
import { InactivityStore } from "./inactivity-store.js";
import { LogDeletionStore } from "./log-deletion-store.js";
import { LogStatsThreads } from "./log-stats-thread.js";
import { LogsStore } from "./logs-store.js";
import { OutboxStore } from "./outbox-store.js";
import { ParkedOutputsStore } from "./parked-outputs-store.js";
import { RateLimitStore } from "./rate-limit-store.js";
import { RetentionStore } from "./retention-store.js";
import { openStateDatabase } from "./state-database.js";
import { SubscriptionsStore } from "./subscriptions-store.js";
import { TriggersStore } from "./triggers-store.js";
import { UsageStore } from "./usage-store.js";
import { WorkflowsStore } from "./workflows-store.js";

/**
 * One area of the store as the services see it: the public methods of its SQLite class, which the
 * PostgreSQL class of the same area implements too (D32). Private members are not part of it, so either
 * class fits.
 */
export type StoreArea<T> = { [K in keyof T]: T[K] };

/**
 * The narrow interface every service and the worker use (D23): all SQL lives behind it, so the SQLite
 * and PostgreSQL stores (D32) are interchangeable without changing the services.
 */
export interface Store {
  accounts: StoreArea<AccountsStore>;
  workflows: StoreArea<WorkflowsStore>;
  environment: StoreArea<EnvironmentStore>;
  triggers: StoreArea<TriggersStore>;
  logs: StoreArea<LogsStore>;
  /** Issue 52: entries deleted with what hangs off them, for retention (D41) and on request (D43). */
  logDeletion: StoreArea<LogDeletionStore>;
  /** D41: each workspace's retention setting, and the oldest entries the purge looks for. */
  retention: StoreArea<RetentionStore>;
  /** Issue 12: the fan-outs that new log entries are waiting to have started. */
  outbox: StoreArea<OutboxStore>;
  /** Block outputs too large to travel beside the others in a workflow task, until the entry is written. */
  parkedOutputs: StoreArea<ParkedOutputsStore>;
  rateLimits: StoreArea<RateLimitStore>;
  usage: StoreArea<UsageStore>;
  notifications: StoreArea<SubscriptionsStore>;
  deliveries: StoreArea<DeliveriesStore>;
  /** D35: the runs of failed deliveries that can disable a webhook or chat endpoint. */
  endpointHealth: EndpointHealthArea;
  /** D36: a failing endpoint's hold, its probe's and its drain's queue. */
  holds: HoldsArea;
  inactivity: StoreArea<InactivityStore>;
  alerts: StoreArea<AlertsStore>;
  /** D42: the workspace-days archived before the purge deleted them. */
  archives: StoreArea<ArchivesStore>;
  /** Rejects when the database cannot answer now: what a process's readiness probe asks (issue 16). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Where the store lives, and FLOWLOG_MASTER_KEY when set; a Config is one. Without a key, the one in
 * master.key beside the SQLite file is used, generated on first start (D4).
 */
export type StoreLocation = ({ dataDir: string } | { file: string }) & {
  masterKey?: string | undefined;
  /** D46: the stats' threads and time limit; the defaults when unset. */
  reads?: Pick<Quotas["reads"], "statsTimeoutMs" | "statsPerProcess">;
};

/** One connection per process (D23), opened on `<dataDir>/flowlog.sqlite` unless a file is given. */
export function openStore(location: StoreLocation): Store {
  const file = "file" in location ? location.file : databaseFile(location.dataDir);
  // Before the database: a bad key stops the start with its own message (D4).
  const masterKey = loadMasterKey({ dataDir: path.dirname(file), masterKey: location.masterKey });
  const db: Db = openDatabase(file);
  const state: Db = openStateDatabase(file);
  const endpointHealth = new EndpointHealthStore(db);
  const holds = new HoldsStore(db);
  const reads = location.reads ?? defaultQuotas.reads;
  const statsThreads = new LogStatsThreads(file, {
    timeoutMs: reads.statsTimeoutMs,
    threads: reads.statsPerProcess,
  });
  return {
    accounts: new AccountsStore(db),
    workflows: new WorkflowsStore(db),
    environment: new EnvironmentStore(db, masterKey),
    triggers: new TriggersStore(db),
    logs: new LogsStore(db, statsThreads),
    logDeletion: new LogDeletionStore(db),
    retention: new RetentionStore(db),
    outbox: new OutboxStore(db),
    parkedOutputs: new ParkedOutputsStore(db),
    rateLimits: new RateLimitStore(db, state),
    usage: new UsageStore(db),
    notifications: new SubscriptionsStore(db, masterKey),
    deliveries: new DeliveriesStore(db, endpointHealth, holds),
    endpointHealth,
    holds,
    inactivity: new InactivityStore(db),
    alerts: new AlertsStore(db),
    archives: new ArchivesStore(db),
    ping: async () => {
      db.prepare("SELECT 1").get();
    },
    close: async () => {
      await statsThreads.close();
      state.close();
      db.close();
    },
  };
}
