/**
 * Workflow code (bundled into the tests' workflow bundle, test-workflow-bundle.ts), so it imports nothing
 * but Temporal's workflow-side modules.
 */
import { msToNumber } from "@temporalio/common/lib/time.js";
import type { WorkflowInterceptorsFactory } from "@temporalio/workflow";

/**
 * The heartbeat timeout of every activity the tests' workers schedule, at most: a delivery attempt, a
 * hold's probe or drain lost with a killed worker is noticed after it (10 s in flowlog's workflows). The
 * tests wait for the retry, never for the timeout's length; an execution's blocks already take 2 s
 * (engine.ts's testTimeouts). An attempt waits up to a second for its endpoint's pace before its first
 * beat, so this leaves a loaded machine room.
 */
const testHeartbeatTimeoutMs = 3_000;
/**
 * The first retry interval of those activities, at most: what a lost attempt waits before the next (5 s
 * for a delivery, D19's first step). The schedule's own waits are unchanged: an attempt that fails sets
 * its next one itself (nextRetryDelay), which tests shrink with their delay scale.
 */
const testLostRetryMs = 500;

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleActivity(input, next) {
        const { heartbeatTimeout, retry } = input.options;
        if (heartbeatTimeout === undefined || msToNumber(heartbeatTimeout) <= testHeartbeatTimeoutMs) {
          return next(input);
        }
        const initialInterval = Math.min(msToNumber(retry?.initialInterval ?? "1 second"), testLostRetryMs);
        return next({
          ...input,
          options: {
            ...input.options,
            heartbeatTimeout: testHeartbeatTimeoutMs,
            retry: { ...retry, initialInterval },
          },
        });
      },
    },
  ],
});
