/**
 * Workflow code (bundled into the tests' workflow bundle, test-workflow-bundle.ts), so it imports nothing
 * but Temporal's workflow-side modules.
 */
import { msToNumber } from "@temporalio/common/lib/time.js";
import type { WorkflowInterceptorsFactory } from "@temporalio/workflow";

/**
 * The heartbeat timeout of every activity the tests' workers schedule, at most: a delivery attempt, a
 * hold's probe or drain lost with a killed worker is retried after it (10 s in flowlog's workflows). The
 * tests wait for the retry, never for the timeout's length; an execution's blocks already take 2 s
 * (engine.ts's testTimeouts). An attempt waits up to a second for its endpoint's pace before its first
 * beat, so this leaves a loaded machine room.
 */
const testHeartbeatTimeoutMs = 3_000;

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleActivity(input, next) {
        const { heartbeatTimeout } = input.options;
        if (heartbeatTimeout === undefined || msToNumber(heartbeatTimeout) <= testHeartbeatTimeoutMs) {
          return next(input);
        }
        return next({ ...input, options: { ...input.options, heartbeatTimeout: testHeartbeatTimeoutMs } });
      },
    },
  ],
});
