import { AccountsStore } from "./accounts-store.js";
import { type Db, databaseFile, openDatabase } from "./database.js";
import { LogsStore } from "./logs-store.js";
import { RateLimitStore } from "./rate-limit-store.js";
import { UsageStore } from "./usage-store.js";
import { WorkflowsStore } from "./workflows-store.js";

/**
 * The narrow interface every service and the worker use (D23): all SQL lives behind it, so a
 * PostgreSQL store can later replace this one without changing the services.
 */
export interface Store {
  accounts: AccountsStore;
  workflows: WorkflowsStore;
  logs: LogsStore;
  rateLimits: RateLimitStore;
  usage: UsageStore;
  close(): void;
}

/** One connection per process (D23), opened on `<dataDir>/flowlog.sqlite` unless a file is given. */
export function openStore(location: { dataDir: string } | { file: string }): Store {
  const db: Db = openDatabase("file" in location ? location.file : databaseFile(location.dataDir));
  return {
    accounts: new AccountsStore(db),
    workflows: new WorkflowsStore(db),
    logs: new LogsStore(db),
    rateLimits: new RateLimitStore(db),
    usage: new UsageStore(db),
    close: () => db.close(),
  };
}
