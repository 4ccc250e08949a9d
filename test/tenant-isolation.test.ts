import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { BlockJson, SpanJson } from "../src/engine/json-shapes.js";
import { defaultQuotas } from "../src/limits/quotas.js";
import type { Store } from "../src/store/store.js";
import { newId } from "../src/util/ids.js";
import { EngineHarness, type RunningWorker, startWorker, testDeps } from "./support/engine.js";
import { createAccount } from "./support/flowlog.js";
import {
  type HeldReceiver,
  type HttpReceiver,
  sendJson,
  startHeldReceiver,
  startReceiver,
} from "./support/http-receiver.js";

const temporal = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
/** Small enough that the flood below outnumbers the worker's 100 activity slots many times over. */
const perWorkspace = 5;
const quotas = {
  ...defaultQuotas,
  workspace: { ...defaultQuotas.workspace, concurrentBlockActivities: perWorkspace },
};

let harness: EngineHarness;
let worker: RunningWorker;
const receivers: HttpReceiver[] = [];

beforeAll(async () => {
  harness = await EngineHarness.connect(temporal);
  worker = await startWorker(temporal, testDeps(harness.store, { quotas }));
});

afterAll(async () => {
  await worker?.stop();
  await harness?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

const starter: BlockJson = { type: "starter", name: "Start", config: {}, enabled: true };
const call = (url: string): BlockJson => ({
  type: "api",
  name: "Call",
  config: { method: "GET", url, retries: 0, timeoutMs: 120_000 },
  enabled: true,
});

/** A workflow of `branches` api calls at once (a count parallel), saved in `workspaceId`. */
function fanOut(store: Store, workspaceId: string, url: string, branches: number): Promise<string> {
  return saveIn(store, workspaceId, "Flood", {
    blocks: { start: starter, call: call(url) },
    edges: [{ source: "start", target: "calls" }],
    loops: {},
    parallels: { calls: { type: "count", count: branches, nodes: ["call"] } },
  });
}

/** A workflow of one api call, saved in `workspaceId`. */
function oneCall(store: Store, workspaceId: string, url: string): Promise<string> {
  return saveIn(store, workspaceId, "Slow call", {
    blocks: { start: starter, call: call(url) },
    edges: [{ source: "start", target: "call" }],
    loops: {},
    parallels: {},
  });
}

async function saveIn(store: Store, workspaceId: string, name: string, state: object): Promise<string> {
  const id = newId("wf");
  const now = Date.now();
  await store.workflows.createWorkflow({
    ...{ id, workspaceId, folderId: null, name, description: "", version: 1, state },
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

/** A slow upstream (support/http-receiver.ts), closed after the file. */
async function heldReceiver(): Promise<HeldReceiver> {
  const receiver = await startHeldReceiver();
  receivers.push(receiver);
  return receiver;
}

/** The quiet tenant: the harness's own workspace runs one api call on a fast upstream, to its end. */
async function quietRun(taskQueue: string) {
  const quick = await startReceiver((_, response) => sendJson(response, 200, { quick: true }));
  receivers.push(quick);
  const quiet = await harness.saveWorkflow({
    blocks: { start: starter, call: call(`${quick.origin}/quick`) },
    edges: [{ source: "start", target: "call" }],
  });
  return (await harness.run(taskQueue, quiet)).result;
}

describe("One tenant cannot hold the worker (D26)", () => {
  it("while one workspace floods the worker with slow blocks, another workspace's execution completes", async () => {
    const slow = await heldReceiver();
    const flooder = await createAccount(harness.store);
    // 2 x 60 api blocks: more than the worker's 100 activity slots, all waiting on the slow upstream.
    const floods = await Promise.all(
      [60, 60].map(async (branches) =>
        harness.start(
          worker.taskQueue,
          await fanOut(harness.store, flooder.workspaceId, `${slow.origin}/slow`, branches),
          {},
          { workspaceId: flooder.workspaceId, billedUserId: flooder.userId },
        ),
      ),
    );
    await expect.poll(() => slow.received.length, { timeout: 20_000 }).toBe(perWorkspace);

    const result = await quietRun(worker.taskQueue);

    // The quiet tenant's block ran and answered while the flood still waited on its upstream.
    expect(result).toMatchObject({ status: "success", output: { data: { quick: true } } });
    expect(slow.received).toHaveLength(perWorkspace);
    for (const flood of floods) expect((await flood.describe()).status.name).toBe("RUNNING");

    slow.release();
    const flooded = await Promise.all(floods.map((flood) => flood.result()));
    // Every waiting block had its turn in the end: the waits used up none of its retries.
    for (const run of flooded) expect(run.status).toBe("success");
    expect(slow.received).toHaveLength(120);
    expect(slow.mostAtOnce()).toBe(perWorkspace);
    const [first] = flooded;
    const spans = (await harness.logged(first as (typeof flooded)[number])).entry.traceSpans as SpanJson[];
    expect(spans[1]?.children.filter((span) => span.status === "success")).toHaveLength(60);
  }, 120_000);

  it("a worker restarted during the flood: the quiet tenant still runs, every flood block runs, each execution is logged once", async () => {
    const deps = testDeps(harness.store, { quotas });
    // Its blocks wait on an upstream that never answers until released: the stop cuts them off once its
    // grace time is over, which need not be issue 16's 30 s here.
    const first = await startWorker(temporal, deps, undefined, { shutdownGraceMs: 2_000 });
    const slow = await heldReceiver();
    const flooder = await createAccount(harness.store);
    const flood = await harness.start(
      first.taskQueue,
      await fanOut(harness.store, flooder.workspaceId, `${slow.origin}/slow`, 30),
      {},
      { workspaceId: flooder.workspaceId, billedUserId: flooder.userId },
    );
    await expect.poll(() => slow.received.length, { timeout: 20_000 }).toBe(perWorkspace);

    // The worker goes away with five blocks running and 25 waiting; another takes its task queue.
    await first.stop();
    const second = await startWorker(temporal, deps, first.taskQueue);
    try {
      const result = await quietRun(second.taskQueue);
      expect(result).toMatchObject({ status: "success", output: { data: { quick: true } } });
      expect((await flood.describe()).status.name).toBe("RUNNING");

      slow.release();
      const flooded = await flood.result();
      expect(flooded.status).toBe("success");
      const spans = (await harness.logged(flooded)).entry.traceSpans as SpanJson[];
      expect(spans[1]?.children.filter((span) => span.status === "success")).toHaveLength(30);
      expect((await harness.store.logs.getExecution(flooded.executionId))?.entry.id).toBe(flooded.logId);
      // The five blocks cut off by the restart ran again on the new worker: 30 + 5 requests in all.
      expect(slow.received).toHaveLength(35);
      expect(slow.mostAtOnce()).toBeLessThanOrEqual(2 * perWorkspace);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it("slow upstreams of many workspaces never hold the worker's workflow tasks: every block reaches its upstream, and another execution completes meanwhile", async () => {
    const slow = await heldReceiver();
    // Eight workspaces, each within D26's cap: 40 one-block executions, each its own workflow task.
    const floods = (
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          const flooder = await createAccount(harness.store);
          const workflowId = await oneCall(harness.store, flooder.workspaceId, `${slow.origin}/slow`);
          return Promise.all(
            Array.from({ length: perWorkspace }, () =>
              harness.start(
                worker.taskQueue,
                workflowId,
                {},
                { workspaceId: flooder.workspaceId, billedUserId: flooder.userId },
              ),
            ),
          );
        }),
      )
    ).flat();
    // A first try waits on its upstream inside its workflow task; were that not capped well below the
    // worker's workflow task slots, the worker would stop taking tasks with some blocks never sent.
    await expect.poll(() => slow.received.length, { timeout: 30_000 }).toBe(floods.length);

    const result = await quietRun(worker.taskQueue);

    expect(result).toMatchObject({ status: "success", output: { data: { quick: true } } });
    expect(slow.received).toHaveLength(floods.length);
    slow.release();
    const flooded = await Promise.all(floods.map((flood) => flood.result()));
    for (const run of flooded) expect(run.status).toBe("success");
    // Each block was sent once: the ones past the cap started as block activities, none twice.
    expect(slow.received).toHaveLength(floods.length);
  }, 120_000);

  it("a block whose attempts start and never finish is given up after three", async () => {
    let starts = 0;
    // The store fails under the block every time: what a lost worker looks like to the next attempt.
    const environment = Object.create(harness.store.environment) as Store["environment"];
    environment.getDecrypted = () => {
      starts++;
      throw new Error("database disk image is malformed");
    };
    const failing = await startWorker(temporal, testDeps({ ...harness.store, environment }, { quotas }));
    try {
      const workflowId = await harness.saveWorkflow({
        blocks: { start: starter, call: call("http://127.0.0.1:9/never") },
        edges: [{ source: "start", target: "call" }],
      });

      const { result, logged } = await harness.run(failing.taskQueue, workflowId);

      expect(starts).toBe(3);
      expect(result.status).toBe("error");
      expect(result.error).toContain("the block started 3 times and never finished");
      expect(logged.entry.level).toBe("error");
    } finally {
      await failing.stop();
    }
  });
});
