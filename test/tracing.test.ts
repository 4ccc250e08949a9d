import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import path from "node:path";
import { promisify } from "node:util";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ListLogsRequestSchema } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { costOf } from "../src/domain/model-prices.js";
import { tracingRequested } from "../src/logging/tracing.js";
import { type HttpReceiver, startReceiver } from "./support/http-receiver.js";
import { type JaegerServer, type JaegerSpan, startJaeger } from "./support/jaeger.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";
import { until } from "./support/until.js";

const repoRoot = path.resolve(import.meta.dirname, "..");

/** Secrets of every kind the execution handles: none may reach a span (D24, D50). */
const secrets = {
  /** A workspace variable the HTTP block sends in its Authorization header and its URL's query. */
  apiToken: `tok-${randomBytes(12).toString("hex")}`,
  /** The webhook's signing secret. */
  signingSecret: `whsec_${randomBytes(18).toString("hex")}`,
  /** The agent provider's key (AGENT_API_KEY), sent as a bearer token. */
  agentKey: `sk-${randomBytes(16).toString("hex")}`,
  /** A header of the webhook's own (D38), a gateway's token. */
  gatewayToken: `gw-${randomBytes(12).toString("hex")}`,
};

let jaeger: JaegerServer;
let upstream: HttpReceiver;
/** An OpenAI-compatible chat-completions provider for the agent block. */
let provider: HttpReceiver;
let receiver: HttpReceiver;
/** A webhook receiver whose subscription leaves the trace context off, as every one made before D50. */
let plainReceiver: HttpReceiver;
let serve: ServeProcess;
let worker: ChildProcessWithoutNullStreams;
let account: { workspace: { id: string }; key: string };

beforeAll(async () => {
  jaeger = await startJaeger();
  upstream = await startReceiver((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" }).end('{"ok": true}');
  });
  provider = await startReceiver((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        model: "gpt-4o-mini-2024-07-18",
        choices: [{ index: 0, message: { role: "assistant", content: "all good" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 },
      }),
    );
  });
  receiver = await startReceiver((_request, response) => {
    response.writeHead(204).end();
  });
  plainReceiver = await startReceiver((_request, response) => {
    response.writeHead(204).end();
  });
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
    OTEL_SERVICE_NAME: "flowlog-under-test",
    // Spans leave within a fifth of a second, so the test does not wait for the default five.
    OTEL_BSP_SCHEDULE_DELAY: "200",
    FLOWLOG_ALLOW_PRIVATE_NETWORKS: "true",
    FLOWLOG_MASTER_KEY: randomBytes(32).toString("base64"),
    FLOWLOG_LOG_LEVEL: "info",
  };
  serve = await startServeProcess(env);
  worker = spawn(process.execPath, ["bin/flowlog.js", "worker"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      ...env,
      FLOWLOG_DATA_DIR: serve.dataDir,
      // The serve's own queue (FLOWLOG_TASK_QUEUE): the default one is any test's to poll.
      FLOWLOG_TASK_QUEUE: serve.taskQueue,
      FLOWLOG_WORKER_PORT: "0",
      TEMPORAL_ADDRESS: inject("temporalAddress"),
      TEMPORAL_NAMESPACE: inject("temporalNamespace"),
    },
  });
  let workerOutput = "";
  worker.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    workerOutput += chunk;
  });
  await until("the worker to poll", () => (/Worker polling/.test(workerOutput) ? true : undefined), 60_000);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["bin/flowlog.js", "bootstrap", "--plan", "pro", "--json"],
    { cwd: repoRoot, env: { ...process.env, ...env, FLOWLOG_DATA_DIR: serve.dataDir } },
  );
  account = JSON.parse(stdout);
}, 120_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    worker.kill("SIGTERM");
    await once(worker, "exit");
  }
  await serve?.stop();
  await Promise.all([upstream?.close(), provider?.close(), receiver?.close(), plainReceiver?.close()]);
  await jaeger?.stop();
});

async function rest(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const answer = await fetch(`${serve.url}${url}`, {
    method,
    headers: { "x-api-key": account.key, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await answer.text();
  expect(answer.status, `${method} ${url}: ${text}`).toBe(200);
  return JSON.parse(text);
}

/** A W3C traceparent of the caller's own: the trace the API call joins. */
function callerTraceparent(): { traceparent: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

describe("OpenTelemetry traces end to end (issue 55, item 5; D50)", () => {
  it("follow one API call through its Temporal workflow, its HTTP block's request and its webhook's delivery, with no secret in any span", async () => {
    const workspace = account.workspace.id;
    const environment = {
      API_TOKEN: secrets.apiToken,
      AGENT_BASE_URL: provider.origin,
      AGENT_API_KEY: secrets.agentKey,
    };
    for (const [name, value] of Object.entries(environment)) {
      await rest("PUT", `/api/v1/workspaces/${workspace}/environment/${name}`, { value });
    }
    const saved = await rest("POST", `/api/v1/workspaces/${workspace}/workflows`, {
      name: "traced",
      state: {
        blocks: {
          start: { type: "starter", name: "Start" },
          call: {
            type: "api",
            name: "Call",
            config: {
              method: "POST",
              url: `${upstream.origin}/orders?token={{API_TOKEN}}`,
              headers: { authorization: "Bearer {{API_TOKEN}}" },
              body: { order: "<start.order>" },
              retries: 0,
            },
          },
          quiet: {
            type: "api",
            name: "Quiet",
            config: {
              method: "GET",
              url: `${upstream.origin}/quiet`,
              retries: 0,
              propagateTraceContext: false,
            },
          },
          answer: {
            type: "agent",
            name: "Answer",
            config: { model: "gpt-4o-mini", prompt: "Summarise <call.data.ok>" },
          },
        },
        edges: [
          { source: "start", target: "call" },
          { source: "call", target: "quiet" },
          { source: "quiet", target: "answer" },
        ],
      },
    });
    const workflowId = saved.workflow.id as string;
    await rest("POST", `/api/v1/workspaces/${workspace}/notifications`, {
      channel: "webhook",
      webhook: {
        url: `${receiver.origin}/hooks`,
        secret: secrets.signingSecret,
        headers: { "x-gateway-token": secrets.gatewayToken },
        propagateTraceContext: true,
      },
      workflowIds: [workflowId],
    });
    await rest("POST", `/api/v1/workspaces/${workspace}/notifications`, {
      channel: "webhook",
      webhook: { url: `${plainReceiver.origin}/hooks` },
      workflowIds: [workflowId],
    });
    const caller = callerTraceparent();
    const executed = await rest(
      "POST",
      `/api/v1/workflows/${workflowId}/execute`,
      { input: { order: 7 } },
      { traceparent: caller.traceparent },
    );
    expect(executed.executionId).toMatch(/^ex_/);

    // The HTTP block's request and the webhook's attempt carried the trace onwards.
    const traceparentOf = (request: { headers: Record<string, unknown> }) =>
      String(request.headers.traceparent);
    expect(upstream.received.map((request) => request.target)).toEqual([
      `/orders?token=${secrets.apiToken}`,
      "/quiet",
    ]);
    // A block whose config says propagateTraceContext: false sends none.
    expect(upstream.received[1]?.headers).not.toHaveProperty("traceparent");
    expect(traceparentOf(upstream.received[0] as HttpReceiver["received"][number])).toMatch(
      new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`),
    );
    const delivered = await until("the webhook's delivery", () => receiver.received[0], 60_000);
    expect(traceparentOf(delivered)).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`));
    const plain = await until("the other webhook's delivery", () => plainReceiver.received[0], 60_000);
    expect(plain.headers).not.toHaveProperty("traceparent");
    expect(plain.headers).not.toHaveProperty("tracestate");

    const spans = await until(
      "both delivery attempts' spans in Jaeger",
      async () => {
        const found = await jaeger.trace(caller.traceId);
        // Both attempts, each linked all the way up: the execution's span is recorded when it ends.
        const ids = new Map(found.map((span) => [span.spanId, span]));
        const linkedToCaller = (span: JaegerSpan | undefined): boolean =>
          span !== undefined &&
          (span.parentId === caller.spanId || linkedToCaller(ids.get(span.parentId ?? "")));
        const attempts = found.filter((span) => span.name === "delivery attempt");
        return attempts.length === 2 && attempts.every(linkedToCaller) ? found : undefined;
      },
      60_000,
    );
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const named = (name: string, where: (span: JaegerSpan) => boolean = () => true) => {
      const found = spans.filter((span) => span.name === name && where(span));
      expect(found, `${name} among ${spans.map((span) => span.name).join(", ")}`).not.toHaveLength(0);
      return found[0] as JaegerSpan;
    };
    const parentOf = (span: JaegerSpan) => byId.get(span.parentId ?? "");
    const ancestors = (span: JaegerSpan) => {
      const chain: string[] = [];
      for (let at = parentOf(span); at; at = parentOf(at)) chain.push(at.name);
      return chain;
    };

    // The API's server span is the caller's child, in the service the variables name.
    const server = named("flowlog.workflows.v1.WorkflowsService/ExecuteWorkflow");
    expect(server.parentId).toBe(caller.spanId);
    expect(server.serviceName).toBe("flowlog-under-test");
    expect(server.tags).toMatchObject({
      "span.kind": "server",
      "rpc.system": "connect_rpc",
      "rpc.service": "flowlog.workflows.v1.WorkflowsService",
      "rpc.method": "ExecuteWorkflow",
      "flowlog.protocol": "rest",
    });

    // API span -> the execution (made by the worker from the context its input carries) -> the block ->
    // its request; none of Temporal's own spans per workflow task or activity (D50).
    const request = named(
      "POST",
      (span) => span.tags["span.kind"] === "client" && span.tags["server.port"] === upstream.port,
    );
    expect(request.tags).toMatchObject({
      "http.request.method": "POST",
      "server.address": "127.0.0.1",
      "url.scheme": "http",
      "http.response.status_code": 200,
    });
    const block = parentOf(request) as JaegerSpan;
    expect(block.name).toBe("block api");
    expect(block.tags).toMatchObject({
      "flowlog.block.id": "call",
      "flowlog.block.type": "api",
      "flowlog.execution.id": executed.executionId,
      "flowlog.workspace.id": workspace,
      "http.response.status_code": 200,
      "flowlog.block.attempts": 1,
    });
    expect(ancestors(block)).toEqual(["execution", server.name]);
    const execution = parentOf(block) as JaegerSpan;
    expect(execution.serviceName).toBe("flowlog-under-test");
    expect(execution.tags).toMatchObject({
      "flowlog.execution.id": executed.executionId,
      "flowlog.workspace.id": workspace,
      "flowlog.workflow.id": workflowId,
      "flowlog.trigger": "api",
      "flowlog.execution.status": "success",
    });
    expect(spans.filter((span) => span.name === "execution")).toHaveLength(1);
    expect(spans.map((span) => span.name)).not.toContainEqual(
      expect.stringMatching(/^(StartWorkflow|RunWorkflow|StartActivity|RunActivity):/),
    );
    const quietRequest = named("GET", (span) => span.tags["server.port"] === upstream.port);
    expect(parentOf(quietRequest)?.tags["flowlog.block.id"]).toBe("quiet");
    expect(parentOf(parentOf(quietRequest) as JaegerSpan)?.spanId).toBe(execution.spanId);
    // The agent block's span has the GenAI attributes and the block's cost; the provider got no traceparent.
    const agent = named("block agent");
    expect(agent.tags).toMatchObject({
      "flowlog.block.id": "answer",
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
      "gen_ai.usage.input_tokens": 1200,
      "gen_ai.usage.output_tokens": 300,
      "flowlog.block.cost_usd": costOf("gpt-4o-mini-2024-07-18", 1200, 300).total,
    });
    expect(agent.tags["flowlog.block.cost_usd"]).toBeGreaterThan(0);
    const chat = named("POST", (span) => span.tags["server.port"] === provider.port);
    expect(chat.parentId).toBe(agent.spanId);
    expect(agent.parentId).toBe(execution.spanId);
    expect(provider.received[0]?.headers).not.toHaveProperty("traceparent");
    // The request's traceparent named the request's own span.
    expect(traceparentOf(upstream.received[0] as HttpReceiver["received"][number])).toContain(request.spanId);

    // ... and the execution -> its notification's attempt (in the trace context the outbox's intent kept) ->
    // its request.
    const post = named("POST", (span) => span.tags["server.port"] === receiver.port);
    expect(traceparentOf(delivered)).toContain(post.spanId);
    const attempt = parentOf(post) as JaegerSpan;
    expect(attempt.name).toBe("delivery attempt");
    expect(attempt.tags).toMatchObject({
      "flowlog.delivery.channel": "webhook",
      "flowlog.delivery.attempt": 1,
      "flowlog.delivery.outcome": "succeeded",
      "flowlog.event.type": "workflow.execution.completed",
      "flowlog.workspace.id": workspace,
      "http.response.status_code": 204,
    });
    expect(attempt.parentId).toBe(execution.spanId);
    // The other webhook's attempt is in the trace too; only its request went without the context.
    const plainPost = named("POST", (span) => span.tags["server.port"] === plainReceiver.port);
    expect(parentOf(plainPost)?.name).toBe("delivery attempt");
    expect(parentOf(parentOf(plainPost) as JaegerSpan)?.spanId).toBe(execution.spanId);

    // Nothing Jaeger stored of the trace holds a secret, whole or in part, nor the URL's path and query.
    const stored = await jaeger.rawTrace(caller.traceId);
    for (const secret of Object.values(secrets)) {
      expect(stored).not.toContain(secret);
      expect(stored).not.toContain(secret.slice(-12));
    }
    expect(stored).not.toContain("token=");
    expect(stored).not.toContain("/orders");
    expect(stored).not.toMatch(/authorization|x-api-key|x-gateway-token/i);
    expect(stored).not.toContain(account.key);

    // A redelivery's attempt is the child of the Redeliver call that asked for it (its series' input
    // carries that call's context), in a trace of that call's own.
    const redeliverer = callerTraceparent();
    await rest(
      "POST",
      `/api/v1/deliveries/${String(attempt.tags["flowlog.delivery.id"])}:redeliver`,
      {},
      { traceparent: redeliverer.traceparent },
    );
    const again = await until("the redelivery", () => receiver.received[1], 60_000);
    expect(traceparentOf(again)).toMatch(new RegExp(`^00-${redeliverer.traceId}-[0-9a-f]{16}-01$`));
    const redelivered = await until(
      "the redelivery's attempt in Jaeger",
      async () => {
        const found = await jaeger.trace(redeliverer.traceId);
        return found.some((span) => span.name === "delivery attempt") ? found : undefined;
      },
      60_000,
    );
    const redeliver = redelivered.find(
      (span) => span.name === "flowlog.notifications.v1.DeliveriesService/Redeliver",
    );
    expect(redeliver?.parentId).toBe(redeliverer.spanId);
    const reattempt = redelivered.find((span) => span.name === "delivery attempt");
    expect(reattempt?.parentId).toBe(redeliver?.spanId);
    expect(reattempt?.tags).toMatchObject({
      "flowlog.delivery.attempt": 1,
      "flowlog.delivery.outcome": "succeeded",
    });
  }, 120_000);

  it("makes a server span for Connect and gRPC-Web calls too, the child of their traceparent, and marks a failed one with its code", async () => {
    const workspaceId = account.workspace.id;
    const rpcPath = "/flowlog.logs.v1.LogsService";
    const callers = {
      connect: callerTraceparent(),
      grpcWeb: callerTraceparent(),
      failed: callerTraceparent(),
    };
    const connect = await fetch(`${serve.url}${rpcPath}/ListLogs`, {
      method: "POST",
      headers: {
        "x-api-key": account.key,
        "content-type": "application/json",
        "connect-protocol-version": "1",
        traceparent: callers.connect.traceparent,
      },
      body: JSON.stringify({ workspaceId, limit: 1 }),
    });
    expect(connect.status).toBe(200);
    const message = toBinary(ListLogsRequestSchema, create(ListLogsRequestSchema, { workspaceId, limit: 1 }));
    const frame = Buffer.alloc(5 + message.byteLength);
    frame.writeUInt32BE(message.byteLength, 1);
    frame.set(message, 5);
    const grpcWeb = await fetch(`${serve.url}${rpcPath}/ListLogs`, {
      method: "POST",
      headers: {
        "x-api-key": account.key,
        "content-type": "application/grpc-web+proto",
        "x-grpc-web": "1",
        traceparent: callers.grpcWeb.traceparent,
      },
      body: frame,
    });
    expect(grpcWeb.status).toBe(200);
    await grpcWeb.arrayBuffer();
    const missing = await fetch(`${serve.url}/api/v1/logs/log_missing`, {
      headers: { "x-api-key": account.key, traceparent: callers.failed.traceparent },
    });
    expect(missing.status).toBe(404);
    const spanOf = (caller: { traceId: string }) =>
      until(
        `the span of trace ${caller.traceId} in Jaeger`,
        async () => (await jaeger.trace(caller.traceId))[0],
      );
    const connectSpan = await spanOf(callers.connect);
    expect(connectSpan.parentId).toBe(callers.connect.spanId);
    expect(connectSpan.tags).toMatchObject({
      "rpc.system": "connect_rpc",
      "rpc.method": "ListLogs",
      "flowlog.protocol": "connect",
    });
    const grpcWebSpan = await spanOf(callers.grpcWeb);
    expect(grpcWebSpan.parentId).toBe(callers.grpcWeb.spanId);
    expect(grpcWebSpan.tags).toMatchObject({
      "rpc.system": "grpc",
      "flowlog.protocol": "grpc-web",
      "rpc.grpc.status_code": 0,
    });
    const failedSpan = await spanOf(callers.failed);
    expect(failedSpan.name).toBe("flowlog.logs.v1.LogsService/GetLog");
    expect(failedSpan.tags).toMatchObject({
      "flowlog.protocol": "rest",
      "rpc.connect_rpc.error_code": "not_found",
      "error.type": "not_found",
      "otel.status_code": "ERROR",
    });
  });

  it("puts the span's trace_id and span_id on the JSON log lines written inside it", async () => {
    const caller = callerTraceparent();
    await rest(
      "POST",
      `/api/v1/workspaces/${account.workspace.id}/logs:delete`,
      { preview: true, executionIds: ["ex_none"] },
      { traceparent: caller.traceparent },
    );
    const line = await until("DeleteLogs' audit line (D43)", () =>
      serve
        .output()
        .split("\n")
        .filter((text) => text.includes("DeleteLogs previewed"))
        .map((text) => JSON.parse(text) as Record<string, unknown>)
        .find((entry) => entry.trace_id === caller.traceId),
    );
    expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(line.span_id).not.toBe(caller.spanId);
    const spans = await until("the DeleteLogs span in Jaeger", async () => {
      const found = await jaeger.trace(caller.traceId);
      return found.length > 0 ? found : undefined;
    });
    expect(spans.map((span) => span.spanId)).toContain(line.span_id);
  });
});

describe("tracing is off unless the standard variables ask for it (D50)", () => {
  it("needs an OTLP endpoint, and OTEL_SDK_DISABLED or a `none` exporter turns it off", () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: "flowlog" })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" })).toBe(
      true,
    );
    expect(
      tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" }),
    ).toBe(false);
    expect(
      tracingRequested({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
        OTEL_TRACES_EXPORTER: "none",
      }),
    ).toBe(false);
  });
});
