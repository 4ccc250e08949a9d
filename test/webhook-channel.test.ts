import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { defaultQuotas } from "../src/limits/quotas.js";
import { buildCompletionEvent, type CompletionEvent } from "../src/notifications/event.js";
import {
  type AttemptResult,
  deliveryTimeoutMs,
  postJson,
  sendWebhookAttempt,
  type WebhookAttempt,
} from "../src/notifications/http-channel.js";
import { signWebhook } from "../src/notifications/signature.js";
import { verifyWebhook } from "../src/notifications/verify-webhook.js";
import type { LogEntryRecord } from "../src/store/records.js";
import {
  closedPort,
  type HttpReceiver,
  type ReceiverHandler,
  receiversClosedAfterEach,
} from "./support/http-receiver.js";
import { runPython } from "./support/python.js";

const startClosedAfterEach = receiversClosedAfterEach();
const receiver = (handler: ReceiverHandler = answering(200)) => startClosedAfterEach(handler);

function answering(status: number, body = "", headers: Record<string, string> = {}): ReceiverHandler {
  return (_, response) => {
    response.writeHead(status, headers);
    response.end(body);
  };
}

const tokens = { prompt: 3, completion: 4, total: 7 };
const entry: LogEntryRecord = {
  id: "log_1",
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
  cost: {
    total: 0.0123,
    tokens,
    models: { "gpt-4o-mini": { input: 0.005, output: 0.0073, total: 0.0123, tokens } },
  },
  files: null,
  traceSpans: [],
  // Non-ASCII on purpose: the signature covers the UTF-8 bytes, not JavaScript's UTF-16 units.
  finalOutput: { greeting: "héllo 👋", quote: '"<&>"' },
};
const event: CompletionEvent = buildCompletionEvent({
  eventId: "evt_1",
  timestampMs: 1767323046300,
  entry,
  include: { finalOutput: true, traceSpans: false, rateLimits: false, usage: false },
});
const secret = "whsec_test_Zm9vYmFyYmF6";

function attempt(target: HttpReceiver | string, extra: Partial<WebhookAttempt> = {}): Promise<AttemptResult> {
  const url = typeof target === "string" ? target : `${target.origin}/hooks/flowlog`;
  return sendWebhookAttempt({
    url,
    event,
    deliveryId: "dlv_1",
    allowPrivateNetworks: true,
    replyLimitBytes: defaultQuotas.replyBytes.delivery,
    ...extra,
  });
}

/** An independent HMAC-SHA256 (Python's hmac) over `<t>.<body>`, the body handed over as raw bytes. */
function pythonSignature(key: string, timestamp: string, body: string): Promise<string> {
  const script = [
    "import hashlib, hmac, sys",
    "body = sys.stdin.buffer.read()",
    "message = sys.argv[2].encode() + b'.' + body",
    "print(hmac.new(sys.argv[1].encode(), message, hashlib.sha256).hexdigest())",
  ].join("\n");
  return runPython("python3", ["-c", script, key, timestamp], Buffer.from(body, "utf8"));
}

describe("Webhook request headers", () => {
  it("sends the event as compact JSON with the spec's headers; Idempotency-Key equals service-delivery-id", async () => {
    const hook = await receiver();
    const before = Date.now();
    const result = await attempt(hook, { secret });
    expect(result).toMatchObject({ outcome: "succeeded", httpStatus: 200 });
    const [request] = hook.received;
    expect(request?.method).toBe("POST");
    expect(request?.body).toBe(JSON.stringify(event));
    expect(request?.headers).toMatchObject({
      "content-type": "application/json",
      "service-event": "workflow.execution.completed",
      "service-delivery-id": "dlv_1",
      "idempotency-key": "dlv_1",
    });
    const timestamp = Number(request?.headers["service-timestamp"]);
    expect(String(timestamp)).toBe(request?.headers["service-timestamp"]);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(Date.now());
    expect(request?.headers["service-signature"]).toMatch(new RegExp(`^t=${timestamp},v1=[0-9a-f]{64}$`));
  });

  it("sends no signature header when no secret is configured", async () => {
    const hook = await receiver();
    await attempt(hook);
    await attempt(hook, { secret: "" });
    for (const request of hook.received) expect(request.headers).not.toHaveProperty("service-signature");
  });

  it("a retry is re-signed with a fresh timestamp while the delivery id stays", async () => {
    const hook = await receiver(answering(503));
    await attempt(hook, { secret });
    await delay(5);
    await attempt(hook, { secret });
    const [first, second] = hook.received.map((request) => request.headers);
    expect(first?.["service-timestamp"]).not.toBe(second?.["service-timestamp"]);
    expect(first?.["service-signature"]).not.toBe(second?.["service-signature"]);
    expect(second?.["service-delivery-id"]).toBe(first?.["service-delivery-id"]);
    expect(second?.["idempotency-key"]).toBe(first?.["idempotency-key"]);
    for (const request of hook.received) {
      expect(verifyWebhook({ secret, body: request.body, headers: request.headers })).toBe(true);
    }
  });
});

describe("Authentication 3: the signature", () => {
  it("an independent HMAC (Python) over the raw body and over the re-serialised JSON matches v1", async () => {
    const hook = await receiver();
    await attempt(hook, { secret });
    const [request] = hook.received;
    const timestamp = String(request?.headers["service-timestamp"]);
    const v1 = String(request?.headers["service-signature"]).split(",v1=")[1];
    const raw = request?.body ?? "";
    expect(await pythonSignature(secret, timestamp, raw)).toBe(v1);
    expect(await pythonSignature(secret, timestamp, JSON.stringify(JSON.parse(raw)))).toBe(v1);
  });

  it("signWebhook is t=<ms>,v1=<lowercase hex HMAC-SHA256 of '<t>.<body>'>", async () => {
    const body = JSON.stringify(event);
    const header = signWebhook([secret], 1767323046300, body);
    expect(header).toBe(`t=1767323046300,v1=${await pythonSignature(secret, "1767323046300", body)}`);
  });
});

describe("Delivery rules: how an answer is classified (D19)", () => {
  it.each([200, 202, 204])("%i acknowledges the delivery", async (status) => {
    const hook = await receiver(answering(status, status === 204 ? "" : "thanks"));
    const result = await attempt(hook);
    expect(result).toMatchObject({ outcome: "succeeded", httpStatus: status });
    expect(result.error).toBeUndefined();
  });

  it.each([500, 503, 429])("%i is retried, with the receiver's Retry-After captured", async (status) => {
    const hook = await receiver(answering(status, "busy", { "retry-after": "7" }));
    const result = await attempt(hook);
    expect(result).toMatchObject({
      outcome: "retry",
      httpStatus: status,
      retryAfterMs: 7000,
      responseSnippet: "busy",
    });
    expect(result.error).toContain(String(status));
  });

  it("a retried answer without Retry-After has no retryAfterMs", async () => {
    const result = await attempt(await receiver(answering(502)));
    expect(result.outcome).toBe("retry");
    expect(result).not.toHaveProperty("retryAfterMs");
  });

  it.each([400, 404, 410, 401])("%i fails the delivery at once", async (status) => {
    const result = await attempt(await receiver(answering(status, '{"error":"nope"}')));
    expect(result).toMatchObject({
      outcome: "failed",
      httpStatus: status,
      responseSnippet: '{"error":"nope"}',
    });
  });

  it.each([301, 302, 307, 308])("a %i redirect fails and is not followed", async (status) => {
    const target = await receiver();
    const hook = await receiver(answering(status, "", { location: `${target.origin}/elsewhere` }));
    const result = await attempt(hook);
    expect(result).toMatchObject({ outcome: "failed", httpStatus: status });
    expect(result.error).toMatch(/redirects are not followed/);
    expect(target.received).toHaveLength(0);
  });

  it("a receiver that never answers times out and is retried (default timeout 30 s)", async () => {
    expect(deliveryTimeoutMs).toBe(30_000);
    const hook = await receiver(() => {});
    const started = performance.now();
    const result = await attempt(hook, { timeoutMs: 300 });
    const waitedMs = performance.now() - started;
    expect(result).toMatchObject({ outcome: "retry", error: "no complete answer within 300 ms" });
    expect(waitedMs).toBeGreaterThanOrEqual(290);
    expect(waitedMs).toBeLessThan(5000);
  });

  it("the timeout covers the body too: headers sent, body stalled, is a timeout", async () => {
    const hook = await receiver((_, response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      response.write("partial");
    });
    const result = await attempt(hook, { timeoutMs: 300 });
    expect(result).toMatchObject({ outcome: "retry", error: "no complete answer within 300 ms" });
  });

  it("a refused connection is a network error and is retried", async () => {
    const result = await attempt(`http://127.0.0.1:${await closedPort()}/hook`);
    expect(result.outcome).toBe("retry");
    expect(result.error).toMatch(/^connection failed: .*ECONNREFUSED/);
  });

  it("keeps the first 1 KB of the response as text, without splitting a character", async () => {
    const body = `${"a".repeat(1023)}é${"b".repeat(5000)}`;
    const result = await attempt(await receiver(answering(500, body)));
    expect(result.responseSnippet).toBe("a".repeat(1023));
    const short = await attempt(await receiver(answering(200, "ok ✓")));
    expect(short.responseSnippet).toBe("ok ✓");
  });

  it("a URL that is not http(s), or carries credentials, fails without sending", async () => {
    const result = await attempt("ftp://example.com/hook");
    expect(result).toMatchObject({ outcome: "failed", error: "url must be an absolute http or https URL" });
    const withCredentials = await attempt(`http://user:${secret}@127.0.0.1:1/hook`);
    expect(withCredentials).toMatchObject({ outcome: "failed", error: "url must not carry credentials" });
  });

  it("the secret never appears in a result, whatever the outcome", async () => {
    const outcomes = await Promise.all([
      attempt(await receiver(answering(500, "x")), { secret }),
      attempt(await receiver(() => {}), { secret, timeoutMs: 100 }),
      attempt(`http://127.0.0.1:${await closedPort()}/`, { secret }),
      attempt(await receiver(), { secret, allowPrivateNetworks: false }),
    ]);
    for (const result of outcomes) expect(JSON.stringify(result)).not.toContain(secret);
  });
});

describe("D22: outbound requests to private networks", () => {
  it("are refused with a clear error and nothing is sent when private networks are not allowed", async () => {
    const hook = await receiver();
    const result = await attempt(hook, { allowPrivateNetworks: false });
    expect(result.outcome).toBe("failed");
    expect(result.error).toMatch(/127\.0\.0\.1.*refused: loopback addresses.*FLOWLOG_ALLOW_PRIVATE_NETWORKS/);
    expect(hook.received).toHaveLength(0);
  });

  it("apply to a name resolving to a private address as well (localhost)", async () => {
    const hook = await receiver();
    const result = await postJson(`http://localhost:${hook.port}/`, "{}", {
      allowPrivateNetworks: false,
      replyLimitBytes: defaultQuotas.replyBytes.delivery,
    });
    expect(result).toMatchObject({ outcome: "failed" });
    expect(result.error).toMatch(/localhost .*refused/);
    expect(hook.received).toHaveLength(0);
  });
});

describe("Errors 2: verifying a delivery on the receiver's side", () => {
  async function signedDelivery() {
    const hook = await receiver();
    await attempt(hook, { secret });
    const [request] = hook.received;
    if (!request) throw new Error("nothing received");
    return request;
  }

  it("accepts the raw body and the re-serialised parsed body, with Node or fetch headers", async () => {
    const { body, headers } = await signedDelivery();
    expect(verifyWebhook({ secret, body, headers })).toBe(true);
    expect(verifyWebhook({ secret, body: JSON.stringify(JSON.parse(body)), headers })).toBe(true);
    const fetchHeaders = new Headers(headers as Record<string, string>);
    expect(verifyWebhook({ secret, body, headers: fetchHeaders })).toBe(true);
  });

  it("rejects a tampered body, a wrong secret, a missing or malformed signature", async () => {
    const { body, headers } = await signedDelivery();
    expect(verifyWebhook({ secret, body: body.replace("wf_1", "wf_2"), headers })).toBe(false);
    expect(verifyWebhook({ secret: `${secret}x`, body, headers })).toBe(false);
    expect(verifyWebhook({ secret, body, headers: { ...headers, "service-signature": undefined } })).toBe(
      false,
    );
    const signature = String(headers["service-signature"]);
    const uppercase = signature.replace(/v1=(.*)$/, (_, hex: string) => `v1=${hex.toUpperCase()}`);
    expect(verifyWebhook({ secret, body, headers: { ...headers, "service-signature": uppercase } })).toBe(
      false,
    );
    expect(
      verifyWebhook({ secret, body, headers: { ...headers, "service-signature": signature.slice(0, -2) } }),
    ).toBe(false);
  });

  it("rejects a timestamp that differs from service-timestamp", async () => {
    const { body, headers } = await signedDelivery();
    const timestamp = Number(headers["service-timestamp"]);
    expect(
      verifyWebhook({ secret, body, headers: { ...headers, "service-timestamp": String(timestamp + 1) } }),
    ).toBe(false);
  });

  it("rejects a delivery signed more than 5 minutes ago, even with a valid signature", () => {
    const body = JSON.stringify(event);
    const signedAt = 1767323046300;
    const headers = {
      "service-timestamp": String(signedAt),
      "service-signature": signWebhook([secret], signedAt, body),
    };
    expect(verifyWebhook({ secret, body, headers, now: () => signedAt + 299_000 })).toBe(true);
    expect(verifyWebhook({ secret, body, headers, now: () => signedAt + 300_001 })).toBe(false);
    expect(verifyWebhook({ secret, body, headers, now: () => signedAt - 300_001 })).toBe(false);
  });
});
