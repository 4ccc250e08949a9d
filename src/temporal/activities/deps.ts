import type { Config } from "../../config/config.js";
import type { AutoDisablePolicy } from "../../domain/auto-disable.js";
import type { DeliveryPolicy } from "../../domain/delivery-schedule.js";
import type { HoldBounds } from "../../domain/hold-policy.js";
import type { PriceTable } from "../../domain/model-prices.js";
import type { PlanTable } from "../../limits/plans.js";
import type { Quotas } from "../../limits/quotas.js";
import type { Logger } from "../../logging/logger.js";
import type { ProcessMetrics } from "../../logging/metrics.js";
import type { Store } from "../../store/store.js";

/** What the worker's activities reach the outside through; the worker process builds it from its config. */
export interface ActivityDeps {
  store: Store;
  /** D22: FLOWLOG_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks: boolean;
  /** What scheduled runs are admitted against and events report as limits (D12): FLOWLOG_PLAN_LIMITS. */
  planLimits: PlanTable;
  /** D26's bounds on what one execution and one workspace may consume; the defaults when absent. */
  quotas?: Quotas;
  /** USD per million tokens by model; the defaults of model-prices.ts when absent. */
  prices?: PriceTable;
  /** How notifications are sent (D19, D20); without it, links in e-mail and chat are relative and e-mail is off. */
  notifications?: NotificationSettings;
  /**
   * The time the delivery side judges by: when a rotated secret's grace period ends (D33), how long an
   * endpoint has been failing (D35). Date.now unless a test moves it on by days.
   */
  clock?: () => number;
  /** The operator log (D35's notices); the process logger unless a test reads the lines itself. */
  logger?: Logger;
  /** The process's Prometheus metrics (issue 16): executions, deliveries and alerts are counted there. */
  metrics?: ProcessMetrics;
  /**
   * D42's archive: writes one workspace's UTC day (its first millisecond) before the retention purge
   * deletes it, and resolves once the day is safely stored. Writing a day already archived must leave
   * it as it is. Without it, nothing is archived and the purge deletes up to the cutoff itself (D41).
   * The worker process gives `archiveDayFor` of FLOWLOG_ARCHIVE_URL (src/retention/archive.ts); the
   * signal is the purge activity's cancellation.
   */
  archiveDay?: (workspaceId: string, dayStartMs: number, signal?: AbortSignal) => Promise<unknown>;
}

/** FLOWLOG_PUBLIC_BASE_URL, FLOWLOG_SMTP_URL, FLOWLOG_MAIL_FROM, and the retry policy an operator may raise (D19). */
export type NotificationSettings = Pick<Config, "publicBaseUrl" | "smtpUrl" | "mailFrom"> & {
  delivery?: Partial<DeliveryPolicy>;
  /**
   * How many milliseconds an alert rule's hour lasts (D21 windows, the no-activity X and the cooldown):
   * 3,600,000 unless tests shrink it, since the dev server cannot skip time.
   */
  alertHourMs?: number;
  /** When a failing webhook or chat endpoint is noticed and disabled (D35): FLOWLOG_AUTO_DISABLE. */
  autoDisable?: AutoDisablePolicy;
  /** How much and how long a held endpoint keeps (D36): FLOWLOG_HOLD. */
  hold?: HoldBounds;
};

/** The deps a worker process runs with: its configuration (D4) over its store, counted in its metrics. */
export function activityDepsFrom(config: Config, store: Store, metrics?: ProcessMetrics): ActivityDeps {
  return {
    store,
    metrics,
    allowPrivateNetworks: config.allowPrivateNetworks,
    planLimits: config.planLimits,
    quotas: config.quotas,
    notifications: config,
  };
}
