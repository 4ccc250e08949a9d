import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Transform } from "node:stream";
import {
  createBrotliCompress,
  createBrotliDecompress,
  createGunzip,
  gzipSync,
  constants as zlibConstants,
} from "node:zlib";
import type { JsonObject } from "@bufbuild/protobuf";
import { Client, Connection } from "@temporalio/client";
import proto from "@temporalio/proto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { AgentBlockError, runAgentBlock } from "../src/blocks/agent.js";
import { type HttpRequestOptions, runHttpRequest } from "../src/blocks/http-request.js";
import type { SpanJson } from "../src/engine/json-shapes.js";
import { defaultQuotas, type Quotas } from "../src/limits/quotas.js";
import { buildCompletionEvent, type CompletionEvent } from "../src/notifications/event.js";
import { sendWebhookAttempt } from "../src/notifications/http-channel.js";
import { sendSlackAttempt } from "../src/notifications/slack.js";
import { readCapped } from "../src/outbound/capped-read.js";
import { createRedactor } from "../src/outbound/redaction.js";
import { databaseFile } from "../src/store/database.js";
import type { LogEntryRecord } from "../src/store/records.js";
import { openSqlite } from "../src/store/sqlite-addon.js";
import { EngineHarness, type RunningWorker, startWorker, testDeps } from "./support/engine.js";
import { receiversClosedAfterEach, sendJson } from "./support/http-receiver.js";

/**
 * Issue 11, outbound side: what a hostile or broken server on the other end of a block's or a channel's
 * request can do to flowlog. Every server here is real (loopback HTTP and HTTPS), every bomb is real
 * compressed data, and the code under test is the product's own, end to end where a workflow is involved.
 */

const receiver = receiversClosedAfterEach();
const mebibyte = 1024 * 1024;
const gibibyte = 1024 * mebibyte;
/** What the test process may grow by while a bomb goes off (issue 11). */
const rssBudget = 64 * mebibyte;
/**
 * What a bomb decodes to: four times the memory budget and 25 times the HTTP block's limit, so one read
 * whole or past its limit shows. (A gibibyte proved no more and took four times as long to inflate.)
 */
const bombSize = 256 * mebibyte;

/** 256 MiB of zeros as brotli (about 50 KB) and as gzip (256 members of 1 MiB each, about 260 KB). */
let brotliBomb: Buffer;
let gzipBomb: Buffer;

beforeAll(async () => {
  const zeros = Buffer.alloc(mebibyte);
  const stream = fastBrotli();
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = once(stream, "end");
  for (let written = 0; written < bombSize; written += mebibyte) {
    if (!stream.write(zeros)) await once(stream, "drain");
  }
  stream.end();
  await done;
  brotliBomb = Buffer.concat(chunks);
  gzipBomb = Buffer.concat(Array(bombSize / mebibyte).fill(gzipSync(zeros, { level: 9 })));
});

/** Quality 1: a gibibyte of zeros compresses in a quarter of a second on a quiet core. */
function fastBrotli() {
  return createBrotliCompress({ params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 1 } });
}

function servingBomb(encoding: "br" | "gzip", contentType = "application/json") {
  return receiver((_, response) => {
    response.writeHead(200, { "content-type": contentType, "content-encoding": encoding });
    response.end(encoding === "br" ? brotliBomb : gzipBomb);
  });
}

/** Counted as it streams, never held. */
async function decodedSize(bomb: Buffer, decoder: Transform): Promise<number> {
  let size = 0;
  decoder.on("data", (chunk: Buffer) => {
    size += chunk.length;
  });
  decoder.end(bomb);
  await once(decoder, "end");
  return size;
}

/** Resident memory growth while `work` runs: a bomb read whole would add 256 MiB. */
async function rssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; grewBy: number }> {
  const before = process.memoryUsage().rss;
  const result = await work();
  return { result, grewBy: process.memoryUsage().rss - before };
}

const blockOptions: HttpRequestOptions = { allowPrivateNetworks: true, sleep: async () => {} };
const limitMessage = `response body exceeds ${defaultQuotas.replyBytes.block} bytes (D26)`;

describe("D26: a reply is read decoded, and no further than its limit", () => {
  it("the bombs really are bombs: under 1 MB each, 256 MiB decoded", async () => {
    expect(brotliBomb.length).toBeLessThan(mebibyte);
    expect(gzipBomb.length).toBeLessThan(mebibyte);
    expect(await decodedSize(brotliBomb, createBrotliDecompress())).toBe(bombSize);
    expect(await decodedSize(gzipBomb, createGunzip())).toBe(bombSize);
  });

  it.each(["br", "gzip"] as const)(
    "a %s bomb fails the HTTP block naming the limit, without a retry, and memory stays flat",
    async (encoding) => {
      const api = await servingBomb(encoding);
      const { result, grewBy } = await rssGrowth(() =>
        runHttpRequest({ method: "GET", url: api.origin }, blockOptions),
      );
      expect(result).toMatchObject({ status: null, data: null, error: limitMessage, attempts: 1 });
      expect(grewBy).toBeLessThan(rssBudget);
    },
  );

  it("the HTTP block's limit is the configured quota, counted on decoded bytes", async () => {
    const quotas = { ...defaultQuotas, replyBytes: { ...defaultQuotas.replyBytes, block: 1000 } };
    const api = await receiver((_, response) => {
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      response.end(gzipSync("x".repeat(1001)));
    });
    const result = await runHttpRequest({ method: "GET", url: api.origin }, { ...blockOptions, quotas });
    expect(result.error).toBe("response body exceeds 1000 bytes (D26)");
    const fits = await receiver((_, response) => {
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      response.end(gzipSync("x".repeat(1000)));
    });
    const read = await runHttpRequest({ method: "GET", url: fits.origin }, { ...blockOptions, quotas });
    expect(read).toMatchObject({ error: null, data: "x".repeat(1000) });
  });

  it("a bomb from an agent provider fails the agent block naming the limit, and memory stays flat", async () => {
    const provider = await servingBomb("br");
    const { result: error, grewBy } = await rssGrowth(() =>
      runAgentBlock(
        { model: "gpt-4o", prompt: "hi" },
        { baseUrl: provider.origin, apiKey: "sk-test-bomb" },
        { allowPrivateNetworks: true, sleep: async () => {} },
      ).catch((failure: unknown) => failure),
    );
    expect(error).toBeInstanceOf(AgentBlockError);
    expect((error as AgentBlockError).message).toBe(`agent provider's ${limitMessage}`);
    expect(provider.received).toHaveLength(1);
    expect(grewBy).toBeLessThan(rssBudget);
  });

  it("a 2xx webhook answer that never ends still counts as delivered, and the rest is left unread", async () => {
    let sentToTheEnd = false;
    const hook = await receiver(async (_, response) => {
      // An endless brotli stream: whoever reads it all never finishes.
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "br" });
      const stream = fastBrotli();
      stream.pipe(response);
      const zeros = Buffer.alloc(mebibyte);
      for (let sent = 0; sent < 8 * gibibyte && !response.destroyed; sent += mebibyte) {
        if (!stream.write(zeros)) await Promise.race([once(stream, "drain"), once(response, "close")]);
      }
      sentToTheEnd = !response.destroyed;
      stream.end();
    });
    const { result, grewBy } = await rssGrowth(() =>
      sendWebhookAttempt({
        url: `${hook.origin}/hooks`,
        event: sampleEvent(),
        deliveryId: "dlv_bomb",
        allowPrivateNetworks: true,
        replyLimitBytes: defaultQuotas.replyBytes.delivery,
        timeoutMs: 20_000,
      }),
    );
    expect(result).toMatchObject({ outcome: "succeeded", httpStatus: 200 });
    expect(result.responseSnippet).toBe("\0".repeat(1024));
    expect(grewBy).toBeLessThan(rssBudget);
    await expect.poll(() => hook.received.length).toBe(1);
    expect(sentToTheEnd).toBe(false);
  });

  it("a huge chat answer does not fail the delivery either", async () => {
    const chat = await servingBomb("gzip", "text/plain");
    const { result, grewBy } = await rssGrowth(() =>
      sendSlackAttempt({
        url: `${chat.origin}/services/T0/B0/x`,
        event: sampleEvent(),
        workflowName: "W",
        logUrl: "http://localhost/log",
        allowPrivateNetworks: true,
        replyLimitBytes: defaultQuotas.replyBytes.delivery,
      }),
    );
    expect(result).toMatchObject({ outcome: "succeeded", httpStatus: 200 });
    expect(grewBy).toBeLessThan(rssBudget);
  });

  it("a delivery answer is pulled from its stream up to the cap and no further", async () => {
    const chunk = new Uint8Array(16 * 1024);
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulled += chunk.byteLength;
          controller.enqueue(chunk);
        },
      },
      { highWaterMark: 0 },
    );
    const cap = defaultQuotas.replyBytes.delivery;
    const { bytes, cut } = await readCapped(endless, { bytes: cap, beyond: "cut" });
    expect({ length: bytes.length, cut }).toEqual({ length: cap, cut: true });
    expect(pulled).toBeLessThanOrEqual(cap + chunk.byteLength);
  });
});

describe("D26: the HTTP block's own settings are bounded at run time, whatever was stored", () => {
  it("retries: 1000000 with retryBaseMs: 0 against a 503 makes 11 attempts, backing off from 100 ms", async () => {
    const api = await receiver((_, response) => sendJson(response, 503, {}));
    const delays: number[] = [];
    const result = await runHttpRequest(
      { method: "GET", url: api.origin, retries: 1_000_000, retryBaseMs: 0 },
      { allowPrivateNetworks: true, random: () => 0.5, sleep: async (ms) => void delays.push(ms) },
    );
    expect(result).toMatchObject({ status: 503, attempts: 11 });
    expect(api.received).toHaveLength(11);
    expect(delays).toEqual([50, 100, 200, 400, 800, 1600, 3200, 6400, 12_800, 15_000]);
  });

  it("the bounds are the configured quotas: timeout, retry count and backoff cap", async () => {
    const httpBlock: Quotas["httpBlock"] = {
      maxRetries: 2,
      maxTimeoutMs: 200,
      minRetryBaseMs: 100,
      maxRetryMaxMs: 1000,
    };
    const quotas = { ...defaultQuotas, httpBlock };
    const silent = await receiver(() => {});
    const timedOut = await runHttpRequest(
      { method: "GET", url: silent.origin, timeoutMs: 100_000, retries: 0 },
      { ...blockOptions, quotas },
    );
    expect(timedOut.error).toBe("request timed out after 200 ms");
    const busy = await receiver((_, response) => sendJson(response, 429, {}, { "retry-after": "120" }));
    const delays: number[] = [];
    const throttled = await runHttpRequest(
      { method: "GET", url: busy.origin, retries: 50, retryMaxMs: 60_000 },
      { ...blockOptions, quotas, sleep: async (ms) => void delays.push(ms) },
    );
    expect(throttled.attempts).toBe(3);
    expect(delays).toEqual([1000, 1000]);
  });
});

describe("Redirects of the HTTP block (issue 11)", () => {
  it("an https answer redirecting to http is refused with a clear error, and nothing goes out in clear", async () => {
    const plain = await receiver((_, response) => sendJson(response, 200, {}));
    const tls = await httpsServer((response) => {
      response.writeHead(302, { location: `${plain.origin}/landing` }).end();
    });
    const result = await trustingSelfSigned(() =>
      runHttpRequest(
        { method: "GET", url: `${tls.origin}/start`, headers: { Authorization: "Bearer t0ken" } },
        blockOptions,
      ),
    );
    expect(result).toMatchObject({ status: null, error: "redirect from https to http refused", attempts: 1 });
    expect(tls.hits).toBe(1);
    expect(plain.received).toHaveLength(0);
  });
});

/** A starter, then a parallel `fan` fetching `<origin>/<item>` once per item, all branches at once. */
function fanOut(origin: string, items: string[]) {
  return {
    blocks: {
      start: { type: "starter", name: "Start", config: {}, enabled: true },
      fetch: {
        type: "api",
        name: "Fetch",
        config: { method: "GET", url: `${origin}/<parallel.item>` },
        enabled: true,
      },
    },
    edges: [{ source: "start", target: "fan" }],
    parallels: { fan: { type: "collection" as const, nodes: ["fetch"], collection: items } },
  };
}

/** Outputs still parked in a data dir's store (parked-outputs-store.ts). */
function parkedRows(dataDir: string): number {
  const db = openSqlite(databaseFile(dataDir), { readonly: true });
  try {
    return db.prepare("SELECT count(*) FROM parked_outputs").pluck().get() as number;
  } finally {
    db.close();
  }
}

describe("Redirects and redaction through a real execution (D14, D24, issue 11)", () => {
  const temporal = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
  /** A key with the characters every encoding changes: space, quote, slash, plus, and base64 with + and /. */
  const partnerKey = 'k3y c~c??d?h+"/';
  let harness: EngineHarness;
  let worker: RunningWorker;

  beforeAll(async () => {
    harness = await EngineHarness.connect(temporal);
    worker = await startWorker(temporal, testDeps(harness.store));
    await harness.store.environment.set(harness.account.workspaceId, "PARTNER_KEY", partnerKey, Date.now());
  });

  afterAll(async () => {
    await worker?.stop();
    await harness?.close();
  });

  async function runApiBlock(config: JsonObject) {
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: { type: "starter", name: "Start", config: {}, enabled: true },
        call: { type: "api", name: "Call", config, enabled: true },
      },
      edges: [{ source: "start", target: "call" }],
    });
    return harness.run(worker.taskQueue, workflowId);
  }

  const postWithSecret = (url: string): JsonObject => ({
    method: "POST",
    url,
    headers: { "x-api-key": "{{PARTNER_KEY}}", "x-trace": "t-1" },
    body: { order: 7 },
  });

  it("a 307 to another origin takes neither the {{secret}} header nor the body; plain headers follow", async () => {
    const other = await receiver((_, response) => sendJson(response, 200, { landed: true }));
    const first = await receiver((_, response) => {
      response.writeHead(307, { location: `${other.origin}/landing` }).end();
    });
    const { result } = await runApiBlock(postWithSecret(`${first.origin}/start`));
    expect(result.status).toBe("success");
    expect(first.received[0]).toMatchObject({ body: '{"order":7}', headers: { "x-api-key": partnerKey } });
    const [landed] = other.received;
    expect(landed).toMatchObject({ method: "POST", body: "", headers: { "x-trace": "t-1" } });
    expect(landed?.headers).not.toHaveProperty("x-api-key");
    expect(landed?.headers).not.toHaveProperty("content-type");
  });

  it("a 307 within the origin keeps the {{secret}} header and the body", async () => {
    const api = await receiver((request, response) => {
      if (request.target === "/start") return void response.writeHead(307, { location: "/landing" }).end();
      sendJson(response, 200, { landed: true });
    });
    const { result } = await runApiBlock(postWithSecret(`${api.origin}/start`));
    expect(result.status).toBe("success");
    expect(api.received[1]).toMatchObject({
      method: "POST",
      target: "/landing",
      body: '{"order":7}',
      headers: { "x-api-key": partnerKey, "x-trace": "t-1", "content-type": "application/json" },
    });
  });

  it("a reply read whole but too big for Temporal to carry fails the block naming the quota; the execution ends, logged once", async () => {
    // 3 MiB: within D26's 10 MiB read, over Temporal's 2 MiB payload limit. Before the bound, such an
    // execution was terminated unlogged, or its workflow task failed and ran the first try over and over.
    const big = { items: "x".repeat(3 * mebibyte) };
    const api = await receiver((request, response) => {
      const answered = api.received.filter((r) => r.target === request.target).length;
      if (request.target === "/after-a-retry" && answered === 1) return void sendJson(response, 503, {});
      sendJson(response, 200, big);
    });
    // Answered at once (the first try, a local activity), and after a 503 (the block activity).
    for (const [target, calls] of [
      ["/at-once", 1],
      ["/after-a-retry", 2],
    ] as const) {
      const { result, logged } = await runApiBlock({ method: "GET", url: `${api.origin}${target}` });
      expect(result.status, target).toBe("error");
      const span = (logged.entry.traceSpans as SpanJson[]).find((s) => s.name === "Call");
      expect(span?.error, target).toMatch(
        /^block output is \d+ bytes as JSON, more than the 1048576 an execution carries \(D26: FLOWLOG_QUOTAS blockOutputBytes\)$/,
      );
      expect(span?.output, target).toMatchObject({ data: null, status: 200 });
      expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
      expect(
        api.received.filter((r) => r.target === target),
        target,
      ).toHaveLength(calls);
    }
  });

  it("replies each within the output quota but together over Temporal's limits still end the execution, logged once, with its output", async () => {
    // Five blocks in a row answering 900 KiB each, within blockOutputBytes: as first tries in one workflow
    // task they made a completion over Temporal's 4 MiB gRPC limit, which failed again and again.
    const answer = { items: "y".repeat(900 * 1024) };
    const api = await receiver((_, response) => sendJson(response, 200, answer));
    const names = ["one", "two", "three", "four", "five"];
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: { type: "starter", name: "Start", config: {}, enabled: true },
        ...Object.fromEntries(
          names.map((name) => [
            name,
            { type: "api", name, config: { method: "GET", url: `${api.origin}/${name}` }, enabled: true },
          ]),
        ),
      },
      edges: ["start", ...names].slice(0, -1).map((source, i) => ({ source, target: names[i] as string })),
    });
    const { result, logged } = await harness.run(worker.taskQueue, workflowId);
    expect(result).toMatchObject({ status: "success", output: null, outputInLog: "whole" });
    expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
    expect(api.received.map((r) => r.target)).toEqual(names.map((name) => `/${name}`));
    expect(logged.entry.finalOutput).toMatchObject({ data: answer, status: 200 });
  });

  const forceClose =
    proto.temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND;

  /**
   * A history with megabytes of outputs, read through a client that takes more than gRPC's default 4 MiB
   * a message (the Temporal CLI and Web UI read whole histories alike).
   */
  async function historyOf(workflowId: string) {
    const connection = await Connection.connect({
      address: temporal.address,
      channelArgs: { "grpc.max_receive_message_length": 64 * mebibyte },
    });
    try {
      const client = new Client({ connection, namespace: temporal.namespace });
      const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
      return { events: events ?? [] };
    } finally {
      await connection.close();
    }
  }

  it("parallel branches answering large outputs at once: each API called once, the rest parked and handed back by block activities", async () => {
    // Five branches answering 900 KiB each, all in flight at once: as first tries of one workflow task their
    // outcomes made a completion over Temporal's 4 MiB gRPC limit, which failed, ran every first try
    // again, called every API again, and never ended. The first to end travels in the task; the others are
    // parked in the store and come back as block activities, which call nothing.
    const answer = { items: "z".repeat(900 * 1024) };
    const api = await receiver((_, response) => void setTimeout(() => sendJson(response, 200, answer), 300));
    const items = ["a", "b", "c", "d", "e"];
    const workflowId = await harness.saveWorkflow(fanOut(api.origin, items));
    const handle = await harness.start(worker.taskQueue, workflowId);
    const result = await handle.result();
    const { entry } = await harness.logged(result);

    expect(result).toMatchObject({ status: "success", outputInLog: "whole" });
    expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
    expect(api.received.map((r) => r.target).sort()).toEqual(items.map((item) => `/${item}`));
    const fan = (entry.traceSpans as SpanJson[]).find((s) => s.name === "fan");
    expect(fan?.children.map((c) => (c.output as { data: unknown }).data)).toEqual(items.map(() => answer));
    const { events } = await historyOf(handle.workflowId);
    const blockActivities = events.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === "runApiBlock",
    );
    expect(blockActivities).toHaveLength(items.length - 1);
    // No task of the worker's failed. The server may fail one itself (force close) to flush the results
    // that arrived while it ran, once they pass its buffered-events size (2 MiB by default); the next task
    // carries them.
    const failedTasks = events.flatMap((e) => e.workflowTaskFailedEventAttributes ?? []);
    expect(failedTasks.filter((f) => f.cause !== forceClose)).toEqual([]);
    // The log entry holds the outputs now: nothing stays parked.
    expect(parkedRows(harness.dataDir)).toBe(0);
  });

  it("a block posting the results of a large parallel sends them whole: its request's outputs are parked, not refused", async () => {
    // Three branches of 900 KiB, then a block posting all their results: its block activity's request
    // carried 2.7 MiB of outputs, over Temporal's 2 MiB payload limit, and the server terminated the
    // execution before its entry was written.
    const answer = { items: "q".repeat(900 * 1024) };
    const api = await receiver((request, response) => {
      if (request.target === "/collect") return void sendJson(response, 200, { bytes: request.body.length });
      void setTimeout(() => sendJson(response, 200, answer), 300);
    });
    const items = ["a", "b", "c"];
    const fan = fanOut(api.origin, items);
    const workflowId = await harness.saveWorkflow({
      blocks: {
        ...fan.blocks,
        collect: {
          type: "api",
          name: "Collect",
          config: { method: "POST", url: `${api.origin}/collect`, body: { all: "<fan.results>" } },
          enabled: true,
        },
      },
      edges: [...fan.edges, { source: "fan", target: "collect" }],
      parallels: fan.parallels,
    });
    const { result, logged } = await harness.run(worker.taskQueue, workflowId);

    expect(result.status).toBe("success");
    expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
    const posted = api.received.filter((r) => r.target === "/collect");
    expect(posted).toHaveLength(1);
    const body = JSON.parse(posted[0]?.body ?? "null") as { all: { data: unknown }[] };
    expect(body.all.map((branch) => branch.data)).toEqual(items.map(() => answer));
    const collect = (logged.entry.traceSpans as SpanJson[]).find((s) => s.name === "Collect");
    expect(collect?.output).toMatchObject({ status: 200, data: { bytes: posted[0]?.body.length } });
    expect(parkedRows(harness.dataDir)).toBe(0);
  });

  it("a server echoing the secret in any encoding leaks it into neither the span nor the final output", async () => {
    const forms = encodedForms(partnerKey);
    const api = await receiver((request, response) => {
      const key = String(request.headers["x-api-key"]);
      const echoed = encodedForms(key);
      response.writeHead(200, { "content-type": "text/plain", "x-echo-basic": echoed.basicAuth });
      response.end(
        Object.entries(echoed)
          .map(([name, form]) => `${name}: ${form}`)
          .join("\n"),
      );
    });
    const { result, logged } = await runApiBlock({
      method: "GET",
      url: `${api.origin}/echo`,
      headers: { "x-api-key": "{{PARTNER_KEY}}" },
    });
    expect(result.status).toBe("success");
    const span = (logged.entry.traceSpans as SpanJson[]).find((s) => s.name === "Call");
    const kept = [...stringsIn(span?.output), ...stringsIn(logged.entry.finalOutput)];
    expect(kept.join("\n")).toContain("[redacted]");
    for (const [name, form] of Object.entries(forms)) {
      for (const text of kept) expect(text, name).not.toContain(form);
    }
  });
});

describe("D26: an execution's Temporal history stays under the server's limit", () => {
  const temporal = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
  let harness: EngineHarness;
  let worker: RunningWorker;
  /** Room for four blocks in flight on an empty history (2 MiB each). */
  const smallHistory = 8 * mebibyte;
  let small: RunningWorker;

  beforeAll(async () => {
    harness = await EngineHarness.connect(temporal);
    worker = await startWorker(temporal, testDeps(harness.store));
    const quotas: Quotas = {
      ...defaultQuotas,
      workflow: { ...defaultQuotas.workflow, maxHistoryBytes: smallHistory },
    };
    small = await startWorker(temporal, testDeps(harness.store, { quotas }));
  });

  afterAll(async () => {
    await small?.stop();
    await worker?.stop();
    await harness?.close();
  });

  it("a loop of large answers stops its blocks before Temporal's 50 MiB, and the execution is logged as an error naming the quota", async () => {
    // 70 answers of 900 KiB: at 50 MiB of history Temporal terminated the execution, unlogged.
    const answer = { items: "h".repeat(900 * 1024) };
    const api = await receiver((_, response) => sendJson(response, 200, answer));
    const workflowId = await harness.saveWorkflow({
      blocks: {
        start: { type: "starter", name: "Start", config: {}, enabled: true },
        fetch: {
          type: "api",
          name: "Fetch",
          config: { method: "GET", url: `${api.origin}/<loop.index>` },
          enabled: true,
        },
      },
      edges: [{ source: "start", target: "many" }],
      loops: { many: { type: "for", nodes: ["fetch"], iterations: 70 } },
    });

    const { result, logged } = await harness.run(worker.taskQueue, workflowId);

    const quotaError =
      /^the execution's Temporal history is \d+ bytes: another block could take it past the 41943040 it may reach \(D26: FLOWLOG_QUOTAS workflow.maxHistoryBytes\)$/;
    expect(result.status).toBe("error");
    expect(result.error).toMatch(quotaError);
    expect(await harness.entriesOf(result.executionId)).toHaveLength(1);
    const calls = api.received.length;
    expect(calls).toBeGreaterThan(30);
    expect(calls).toBeLessThan(70);
    const runs = (logged.entry.traceSpans as SpanJson[]).find((s) => s.name === "many")?.children ?? [];
    expect(runs.filter((r) => r.error === undefined || r.error === null)).toHaveLength(calls);
    expect(runs.at(-1)?.error).toMatch(quotaError);
    // About 40 MiB goes through Temporal's history, the size the promise is about: 7 to 16 s on a quiet
    // machine, past a minute with both cores busy (a worker's cached workflow evicted is replayed whole).
  }, 180_000);

  it("parallel branches past the room wait for others to end, and all succeed", async () => {
    let inFlight = 0;
    let most = 0;
    const api = await receiver((_, response) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        sendJson(response, 200, { small: true });
      }, 400);
    });
    const items = ["a", "b", "c", "d", "e", "f", "g", "h"];
    const workflowId = await harness.saveWorkflow(fanOut(api.origin, items));

    const { result } = await harness.run(small.taskQueue, workflowId);

    expect(result.status).toBe("success");
    expect(api.received).toHaveLength(items.length);
    // 8 MiB leaves room for 3 blocks of 2 MiB beside the history the execution has when they start.
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThan(items.length);
  });
});

describe("D24: one redactor masks a secret in each encoded form", () => {
  const secret = 'k3y c~c??d?h+"/';
  const redact = createRedactor([secret]).text;

  it.each(Object.entries(encodedForms(secret)))("%s", (_, form) => {
    const masked = redact(`before ${form} after`);
    expect(masked).not.toContain(form);
    expect(masked).toMatch(/^before .*\[redacted\].* after$/);
  });

  it("deep through outputs, keys included, and leaves values shorter than 4 characters alone", () => {
    const output = createRedactor([secret, "abc"]).value({
      [secret]: [{ note: `x ${secret}` }],
      short: "abc",
    });
    expect(output).toEqual({ "[redacted]": [{ note: "x [redacted]" }], short: "abc" });
  });
});

/** How a server might echo a secret back: every form issue 11 names. */
function encodedForms(secret: string): Record<string, string> {
  return {
    exact: secret,
    uriComponent: encodeURIComponent(secret),
    formEncoded: new URLSearchParams({ k: secret }).toString().slice(2),
    base64: Buffer.from(secret).toString("base64"),
    base64url: Buffer.from(secret).toString("base64url"),
    basicAuth: `Basic ${Buffer.from(`partner:${secret}`).toString("base64")}`,
    jsonEscaped: JSON.stringify(secret).slice(1, -1),
  };
}

function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => [key, ...stringsIn(item)]);
  }
  return [];
}

/** An HTTPS server on 127.0.0.1 with a certificate made for this run by openssl. */
async function httpsServer(
  handler: (response: ServerResponse) => void,
): Promise<{ origin: string; hits: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), "flowlog-tls-"));
  const [key, cert] = [path.join(dir, "key.pem"), path.join(dir, "cert.pem")];
  execFileSync("openssl", [
    ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
    ...["-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"],
    ...["-addext", "subjectAltName=IP:127.0.0.1"],
  ]);
  const state = { origin: "", hits: 0 };
  const server = createHttpsServer(
    { key: readFileSync(key), cert: readFileSync(cert) },
    (request, response) => {
      state.hits++;
      request.resume();
      handler(response);
    },
  );
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  state.origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  return state;
}

/** The product trusts only real certificates; the test's own is accepted for the span of `work`. */
async function trustingSelfSigned<T>(work: () => Promise<T>): Promise<T> {
  const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
  try {
    return await work();
  } finally {
    if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous;
  }
}

function sampleEvent(): CompletionEvent {
  return buildCompletionEvent({
    eventId: "evt_outbound",
    timestampMs: Date.now(),
    entry: completedEntry,
    include: { finalOutput: false, traceSpans: false, rateLimits: false, usage: false },
  });
}

const completedEntry: LogEntryRecord = {
  id: "log_outbound",
  workspaceId: "ws_1",
  workflowId: "wf_1",
  folderId: null,
  executionId: "ex_1",
  billedUserId: null,
  level: "info",
  trigger: "api",
  startedAt: 1767323045000,
  endedAt: 1767323046250,
  totalDurationMs: 1250,
  cost: { total: 0, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} },
  files: null,
  traceSpans: [],
  finalOutput: null,
};
