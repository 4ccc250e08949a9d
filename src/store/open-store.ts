import type { Config } from "../config/config.js";
import { loadSharedMasterKey } from "../security/secrets.js";
import { openPostgresStore } from "./postgres/store.js";
import { openStore, type Store } from "./store.js";

/**
 * The store the configuration names (D32): PostgreSQL when FLOWLOG_DATABASE_URL is set, reachable and
 * migrated before this returns (a wrong URL or an unreachable server is a DatabaseUrlError naming the
 * variable, password masked), else the SQLite file in FLOWLOG_DATA_DIR. Every process and CLI command
 * opens its store here.
 */
export async function openConfiguredStore(
  config: Pick<Config, "dataDir" | "databaseUrl" | "masterKey"> &
    Partial<Pick<Config, "quotas" | "databasePool">>,
): Promise<Store> {
  const reads = config.quotas?.reads;
  if (config.databaseUrl === undefined) return openStore({ ...config, reads });
  return openPostgresStore(config.databaseUrl, loadSharedMasterKey(config), {
    pool: config.databasePool,
    reads,
  });
}
