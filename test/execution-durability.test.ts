import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { ExecutionRecord } from "../src/store/records.js";
import type { Store } from "../src/store/store.js";
import { EngineHarness, startWorker, testDeps } from "./support/engine.js";
import { type HttpReceiver, sendJson, startReceiver } from "./support/http-receiver.js";

const temporal = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };

let harness: EngineHarness;
const receivers: HttpReceiver[] = [];

beforeAll(async () => {
  harness = await EngineHarness.connect(temporal);
});

afterAll(async () => {
  await harness?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

/** starter -> api (GET url) -> response with the api's data. */
function callAndRespond(url: string): string {
  return harness.saveWorkflow({
    blocks: {
      start: { type: "starter", name: "Start", config: {}, enabled: true },
      call: { type: "api", name: "Call", config: { method: "GET", url, retries: 0 }, enabled: true },
      done: { type: "response", name: "Done", config: { data: "<call.data>" }, enabled: true },
    },
    edges: [
      { source: "start", target: "call" },
      { source: "call", target: "done" },
    ],
  });
}

describe("Logs: exactly one log entry per execution (D17)", () => {
  it("a log write retried after its acknowledgement was lost still leaves one entry", async () => {
    let attempts = 0;
    // The write commits, then the worker fails before reporting it: Temporal runs the activity again.
    const logs = Object.create(harness.store.logs) as Store["logs"];
    logs.insertExecution = (record: ExecutionRecord) => {
      const inserted = harness.store.logs.insertExecution(record);
      attempts++;
      if (attempts === 1) throw new Error("connection lost after commit");
      return inserted;
    };
    const worker = await startWorker(temporal, testDeps({ ...harness.store, logs }));
    try {
      const workflowId = harness.saveWorkflow({
        blocks: { start: { type: "starter", name: "Start", config: {}, enabled: true } },
      });
      const { result, logged } = await harness.run(worker.taskQueue, workflowId, { hello: "world" });

      expect(attempts).toBe(2);
      expect(harness.entriesOf(result.executionId)).toHaveLength(1);
      expect(logged.entry).toMatchObject({ id: result.logId, finalOutput: { hello: "world" } });
    } finally {
      await worker.stop();
    }
  });

  it("a worker killed during a request is replaced and the execution finishes with one entry", async () => {
    const api = await startReceiver((_, response, index) => {
      // The first request never gets an answer: its worker is killed while waiting for it.
      if (index > 0) sendJson(response, 200, { answeredAttempt: index + 1 });
    });
    receivers.push(api);
    const taskQueue = `engine-kill-${Date.now()}`;
    const doomed = await spawnWorker(taskQueue);
    const handle = await harness.start(taskQueue, callAndRespond(`${api.origin}/slow`));
    await until(() => api.received.length === 1);

    doomed.kill("SIGKILL");
    await once(doomed, "exit");
    const replacement = await startWorker(temporal, testDeps(harness.store), taskQueue);
    try {
      const result = await handle.result();

      expect(result).toMatchObject({ status: "success", output: { data: { answeredAttempt: 2 } } });
      expect(api.received).toHaveLength(2);
      expect(harness.entriesOf(result.executionId)).toHaveLength(1);
      expect(harness.logged(result).entry.level).toBe("info");
    } finally {
      await replacement.stop();
    }
  });
});

describe("Logs: a cancelled execution is logged too (D17)", () => {
  it("cancelling during a request ends the execution as an error with its one entry", async () => {
    const api = await startReceiver(() => {});
    receivers.push(api);
    const worker = await startWorker(temporal, testDeps(harness.store));
    try {
      const handle = await harness.start(worker.taskQueue, callAndRespond(`${api.origin}/never`));
      await until(() => api.received.length === 1);
      await handle.cancel();
      const result = await handle.result();

      expect(result).toMatchObject({
        status: "error",
        httpStatus: 500,
        error: "the execution was cancelled",
      });
      expect(harness.entriesOf(result.executionId)).toHaveLength(1);
      expect(harness.logged(result).entry.level).toBe("error");
    } finally {
      await worker.stop();
    }
  });
});

const workerScript = fileURLToPath(new URL("./support/engine-worker-process.ts", import.meta.url));

async function spawnWorker(taskQueue: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", workerScript, temporal.address, temporal.namespace, taskQueue, harness.dataDir],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let output = "";
  for await (const chunk of child.stdout ?? []) {
    output += String(chunk);
    if (output.includes("ready")) return child;
  }
  throw new Error(`the worker process exited before it was ready: ${output}`);
}

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
