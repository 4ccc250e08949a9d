import type { Config } from "../config/config.js";
import { openConfiguredStore } from "../store/open-store.js";
import { activityDepsFrom } from "../temporal/activities/deps.js";
import { FLOWLOG_TASK_QUEUE } from "../temporal/task-queue.js";
import { createFlowlogWorker } from "../temporal/worker.js";
import { untilStopSignal } from "./signals.js";

/** `flowlog worker` (D3): the Temporal worker alone, against TEMPORAL_ADDRESS, over the data dir's store. */
export async function runWorker(config: Config): Promise<void> {
  const address = config.temporalAddress ?? "localhost:7233";
  const store = await openConfiguredStore(config);
  try {
    const worker = await createFlowlogWorker({
      address,
      namespace: config.temporalNamespace,
      deps: activityDepsFrom(config, store),
    });
    const running = worker.run();
    console.log(`Worker polling task queue ${FLOWLOG_TASK_QUEUE} at ${address}`);
    await Promise.race([untilStopSignal(), running]);
    worker.shutdown();
    await running;
  } finally {
    await store.close();
  }
}
