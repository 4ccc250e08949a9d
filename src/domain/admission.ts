import { Code, ConnectError } from "@connectrpc/connect";
import type { UserRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { computeLimits, type ExecutionMode, takeExecutionToken } from "./limits.js";
import type { PlanTable } from "./plans.js";

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
  const usage = (await computeLimits(store, planLimits, user, nowMs)).usage;
  if (usage?.isExceeded) {
    throw new ConnectError(
      `the usage limit of the ${usage.plan} plan (${usage.limit} USD this month) is reached: ` +
        `${usage.currentPeriodCost.toFixed(4)} USD used; new executions are refused until next month`,
      Code.ResourceExhausted,
    );
  }
  const token = await takeExecutionToken(store, planLimits, user, mode, nowMs);
  if (!token.allowed) {
    throw new ConnectError(
      `too many ${mode} executions: the ${user.plan} plan allows a burst of ${mode} executions and then a ` +
        `steady rate; retry after ${token.retryAfterSeconds} s`,
      Code.ResourceExhausted,
      { "Retry-After": String(token.retryAfterSeconds) },
    );
  }
}
