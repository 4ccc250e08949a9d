/** The plans of the spec's tables (D5). */
export const plans = ["free", "pro", "team", "enterprise"] as const;
export type Plan = (typeof plans)[number];

/** A token bucket's shape: the sustained rate and how many tokens it can hold. */
export interface BucketShape {
  requestsPerMinute: number;
  maxBurst: number;
}

export interface PlanLimits {
  /** Calls to the API itself (spec "API rate limit", D11). */
  api: BucketShape;
  /** Workflow executions (D12): async is five times sync. */
  syncExecutions: BucketShape;
  asyncExecutions: BucketShape;
  /** Usage limit per calendar month, USD (D12). */
  usageLimitUsd: number;
  /** How many days log entries are kept, by startedAt (D41); 0 keeps them forever. */
  retentionDays: number;
  /** TailLogs streams one user may hold open at once (D44). */
  openTails: number;
}

const bucket = (requestsPerMinute: number, maxBurst: number): BucketShape => ({
  requestsPerMinute,
  maxBurst,
});

/** Limits for every plan; the running process gets its table from config (FLOWLOG_PLAN_LIMITS, D12). */
export type PlanTable = Record<Plan, PlanLimits>;

/**
 * The spec's plan table and D12's defaults, in one place. Only config/config.ts reads it, to merge
 * FLOWLOG_PLAN_LIMITS over it; everything else is handed the resulting PlanTable.
 */
export const defaultPlanLimits: PlanTable = {
  free: {
    api: bucket(10, 20),
    syncExecutions: bucket(10, 20),
    asyncExecutions: bucket(50, 100),
    usageLimitUsd: 10,
    retentionDays: 7,
    openTails: 2,
  },
  pro: {
    api: bucket(30, 60),
    syncExecutions: bucket(30, 60),
    asyncExecutions: bucket(150, 300),
    usageLimitUsd: 100,
    retentionDays: 30,
    openTails: 5,
  },
  team: {
    api: bucket(60, 120),
    syncExecutions: bucket(60, 120),
    asyncExecutions: bucket(300, 600),
    usageLimitUsd: 500,
    retentionDays: 90,
    openTails: 10,
  },
  enterprise: {
    api: bucket(120, 240),
    syncExecutions: bucket(120, 240),
    asyncExecutions: bucket(600, 1200),
    usageLimitUsd: 5000,
    retentionDays: 365,
    openTails: 20,
  },
};
