import type { PriceTable } from "../../services/pricing/model-prices.js";
import type { Store } from "../../store/store.js";

/** What the worker's activities reach the outside through; the worker process builds it from its config. */
export interface ActivityDeps {
  store: Store;
  /** D22: FLOWLOG_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks: boolean;
  /** USD per million tokens by model; the defaults of model-prices.ts when absent. */
  prices?: PriceTable;
}
