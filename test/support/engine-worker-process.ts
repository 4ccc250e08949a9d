/**
 * A flowlog worker in a process of its own, for tests that kill it: `node --import tsx` this file with
 * <address> <namespace> <taskQueue> <dataDir>. It prints "ready" once it polls.
 */

import { workflowBundlePath } from "../../scripts/build.mjs";
import { defaultPlanLimits } from "../../src/limits/plans.js";
import { openStore } from "../../src/store/store.js";
import { createFlowlogWorker } from "../../src/temporal/worker.js";

const [address = "", namespace = "", taskQueue = "", dataDir = ""] = process.argv.slice(2);
const store = openStore({ dataDir });
const worker = await createFlowlogWorker({
  address,
  namespace,
  taskQueue,
  deps: { store, allowPrivateNetworks: true, planLimits: defaultPlanLimits },
  // The replacement worker takes over the workflow soon after this one dies.
  stickyQueueScheduleToStartTimeoutMs: 1_000,
  // The build's bundle, as startWorker's (engine.ts): a killed worker's replacement starts in less time.
  workflowBundle: { codePath: workflowBundlePath },
});
const running = worker.run();
console.log("ready");
await running;
