import { Code, ConnectError } from "@connectrpc/connect";
import type { Limits, RateLimitBucket } from "../../gen/flowlog/logs/v1/limits_pb.js";
import type { UserRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { BucketRef } from "../store/usage-store.js";
import { isoFromMs } from "../util/time.js";
import type { BucketShape, PlanTable } from "./plans.js";
import { type BucketState, bucketState, type TakeResult } from "./token-bucket.js";

/**
 * D12 in one place: each user's sync and async execution buckets and the month's usage limit, which admit
 * or refuse an execution and make the limits object every answer of the logs API carries.
 */

export type ExecutionMode = "sync" | "async";

/** Each user has one sync and one async execution bucket, shaped by the plan (D12). */
export function executionBucket(planLimits: PlanTable, user: UserRecord, mode: ExecutionMode): BucketRef {
  const limits = planLimits[user.plan];
  return {
    key: `exec-${mode}:${user.id}`,
    shape: mode === "sync" ? limits.syncExecutions : limits.asyncExecutions,
  };
}

/** Takes a token for one workflow execution; refused when the mode's bucket is empty (D12). */
export function takeExecutionToken(
  store: Store,
  planLimits: PlanTable,
  user: UserRecord,
  mode: ExecutionMode,
  nowMs: number,
): Promise<TakeResult> {
  const { key, shape } = executionBucket(planLimits, user, mode);
  return store.rateLimits.take(key, shape, nowMs);
}

/** An admission's verdict (D12): admitted, or refused with the error, and when a token comes if that is why. */
export type Admission =
  | { admitted: true }
  | { admitted: false; refusal: ConnectError; retryAfterSeconds?: number | undefined };

/**
 * Admits one workflow execution for the user who pays for it (D12), or refuses it with a clear error:
 * the month's usage limit first (refusing by usage must not spend an execution token), then a token
 * from the sync or async bucket. The limits object of the logs API reads the same numbers.
 */
export async function admitExecution(
  store: Store,
  planLimits: PlanTable,
  user: UserRecord,
  mode: ExecutionMode,
  nowMs: number,
): Promise<void> {
  const admission = await executionAdmission(store, planLimits, user, mode, nowMs);
  if (!admission.admitted) throw admission.refusal;
}

/**
 * admitExecution's verdict as a value, for a caller that waits for the bucket rather than failing on it
 * (D47's bulk jobs): a refusal by the bucket says when its next token comes; one by usage does not.
 */
export async function executionAdmission(
  store: Store,
  planLimits: PlanTable,
  user: UserRecord,
  mode: ExecutionMode,
  nowMs: number,
): Promise<Admission> {
  const usage = (await computeLimits(store, planLimits, user, nowMs)).usage;
  if (usage?.isExceeded) {
    const refusal = new ConnectError(
      `the usage limit of the ${usage.plan} plan (${usage.limit} USD this month) is reached: ` +
        `${usage.currentPeriodCost.toFixed(4)} USD used; new executions are refused until next month`,
      Code.ResourceExhausted,
    );
    return { admitted: false, refusal };
  }
  const token = await takeExecutionToken(store, planLimits, user, mode, nowMs);
  if (token.allowed) return { admitted: true };
  const refusal = new ConnectError(
    `too many ${mode} executions: the ${user.plan} plan allows a burst of ${mode} executions and then a ` +
      `steady rate; retry after ${token.retryAfterSeconds} s`,
    Code.ResourceExhausted,
    { "Retry-After": String(token.retryAfterSeconds) },
  );
  return { admitted: false, refusal, retryAfterSeconds: token.retryAfterSeconds };
}

/**
 * The limits object of every response body (D12): the execution buckets as they stand, never taken
 * from by reading them, and the month's usage against the plan's limit, all from one statement.
 */
export async function computeLimits(
  store: Store,
  planLimits: PlanTable,
  user: UserRecord,
  nowMs: number,
): Promise<Limits> {
  const sync = executionBucket(planLimits, user, "sync");
  const async = executionBucket(planLimits, user, "async");
  const snapshot = await store.usage.snapshot({ userId: user.id, nowMs, sync, async });
  const limit = planLimits[user.plan].usageLimitUsd;
  // Message literals, not `create(LimitsSchema, …)`, which walks the descriptor on every request (issue 13);
  // tsc holds each literal to its .proto.
  return {
    $typeName: "flowlog.logs.v1.Limits",
    workflowExecutionRateLimit: {
      $typeName: "flowlog.logs.v1.ExecutionRateLimits",
      syncExecutions: bucketMessage(sync.shape, bucketState(snapshot.sync, sync.shape, nowMs)),
      asyncExecutions: bucketMessage(async.shape, bucketState(snapshot.async, async.shape, nowMs)),
    },
    usage: {
      $typeName: "flowlog.logs.v1.Usage",
      currentPeriodCost: snapshot.periodCost,
      limit,
      plan: user.plan,
      isExceeded: snapshot.periodCost >= limit,
    },
  };
}

function bucketMessage(shape: BucketShape, state: BucketState): RateLimitBucket {
  return {
    $typeName: "flowlog.logs.v1.RateLimitBucket",
    requestsPerMinute: shape.requestsPerMinute,
    maxBurst: shape.maxBurst,
    remaining: state.remaining,
    resetAt: isoFromMs(state.resetAtMs),
  };
}
