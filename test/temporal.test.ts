import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client, Connection } from "@temporalio/client";
import proto from "@temporalio/proto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { defaultPlanLimits } from "../src/limits/plans.js";
import { openStore, type Store } from "../src/store/store.js";
import { flowlogSearchAttributes } from "../src/temporal/search-attributes.js";
import { createFlowlogWorker } from "../src/temporal/worker.js";
import { workerRoundTrip } from "../src/temporal/workflows/index.js";

const address = inject("temporalAddress");
const namespace = inject("temporalNamespace");

describe("Temporal (issue 2, item 7)", () => {
  let connection: Connection;
  let store: Store;

  beforeAll(async () => {
    connection = await Connection.connect({ address });
    store = openStore({ dataDir: mkdtempSync(path.join(tmpdir(), "flowlog-temporal-test-")) });
  });

  afterAll(async () => {
    await connection?.close();
    await store?.close();
  });

  it("the worker runs a workflow end to end against the real dev server", async () => {
    const taskQueue = `round-trip-${randomUUID()}`;
    const deps = { store, allowPrivateNetworks: false, planLimits: defaultPlanLimits };
    const worker = await createFlowlogWorker({ address, namespace, taskQueue, deps });
    const running = worker.run();
    try {
      const client = new Client({ connection, namespace });
      const greeting = await client.workflow.execute(workerRoundTrip, {
        taskQueue,
        workflowId: `round-trip-${randomUUID()}`,
        args: ["flowlog"],
      });
      expect(greeting).toBe(`Hello, flowlog, from worker process ${process.pid} on task queue ${taskQueue}`);
    } finally {
      worker.shutdown();
      await running;
    }
  });

  it("our search attributes are registered on the namespace with their types (keywords, keyword lists)", async () => {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const types = proto.temporal.api.enums.v1.IndexedValueType;
    for (const key of Object.values(flowlogSearchAttributes)) {
      expect(customAttributes?.[key.name], key.name).toBe(types[`INDEXED_VALUE_TYPE_${key.type}`]);
    }
    expect(customAttributes?.FlowlogDeliveryIds).toBe(types.INDEXED_VALUE_TYPE_KEYWORD_LIST);
  });
});
