/**
 * A flowlog worker in a process of its own, for tests that kill it or run several: `node --import tsx`
 * this file with <address> <namespace> <taskQueue> <dataDir>. Its store is the SQLite file in dataDir,
 * or the database of FLOWLOG_DATABASE_URL (with FLOWLOG_MASTER_KEY) when the environment sets one, as a
 * test store's `env` does (test-store.ts); FLOWLOG_TEST_DELAY_SCALE scales the delivery schedule and the
 * hold's probe (D19, D36); FLOWLOG_TEST_NOW_MS stops its clock at that time (D41's windows). It prints
 * "ready" once it polls.
 */

import { defaultPlanLimits } from "../../src/limits/plans.js";
import { openConfiguredStore } from "../../src/store/open-store.js";
import { createFlowlogWorker } from "../../src/temporal/worker.js";
import { testWorkflowBundlePath } from "./test-workflow-bundle.js";

const [address = "", namespace = "", taskQueue = "", dataDir = ""] = process.argv.slice(2);
const delayScale = process.env.FLOWLOG_TEST_DELAY_SCALE
  ? Number(process.env.FLOWLOG_TEST_DELAY_SCALE)
  : undefined;
const store = await openConfiguredStore({
  dataDir,
  databaseUrl: process.env.FLOWLOG_DATABASE_URL,
  masterKey: process.env.FLOWLOG_MASTER_KEY,
});
const worker = await createFlowlogWorker({
  address,
  namespace,
  taskQueue,
  deps: {
    store,
    allowPrivateNetworks: true,
    planLimits: defaultPlanLimits,
    ...(process.env.FLOWLOG_TEST_NOW_MS ? { clock: () => Number(process.env.FLOWLOG_TEST_NOW_MS) } : {}),
    // D19's and D36's waits shrunk for a test that needs hours to pass in seconds.
    ...(delayScale === undefined
      ? {}
      : { notifications: { publicBaseUrl: "", smtpUrl: undefined, mailFrom: "", delivery: { delayScale } } }),
  },
  // The replacement worker takes over the workflow soon after this one dies.
  stickyQueueScheduleToStartTimeoutMs: 1_000,
  // The tests' bundle, as startWorker's (engine.ts): a killed worker's replacement starts in less time.
  workflowBundle: { codePath: testWorkflowBundlePath },
});
const running = worker.run();
console.log("ready");
await running;
