import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ListLogsRequestSchema } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { openStore, type Store } from "../src/store/store.js";
import { createAccount, type TestAccount } from "./support/flowlog.js";
import { h2Requests } from "./support/http2-burst.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";

/**
 * Issue 11: what a stranger or a tenant can send the real `flowlog serve` over real sockets, and what it
 * answers. Every case asserts the documented refusal and that the server still answers a normal request
 * afterwards; the bombs also assert that the server's peak resident memory grew by less than 64 MB.
 */

const mib = 1024 * 1024;
const memoryBudget = 64 * mib;
const listLogsPath = "/flowlog.logs.v1.LogsService/ListLogs";

/** Compresses `total` zero bytes without holding them: a small body that decodes to a huge one. */
async function zeroBomb(compressor: zlib.Gzip | zlib.BrotliCompress, total: number): Promise<Buffer> {
  const out: Buffer[] = [];
  compressor.on("data", (chunk: Buffer) => out.push(chunk));
  const chunk = Buffer.alloc(16 * mib);
  for (let written = 0; written < total; written += chunk.length) {
    if (!compressor.write(chunk)) await new Promise((resolve) => compressor.once("drain", resolve));
  }
  await new Promise<void>((resolve) => compressor.end(resolve));
  return Buffer.concat(out);
}

/** A gRPC message frame: the compressed flag, the length, the bytes. */
function grpcFrame(bytes: Buffer, compressed: boolean): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(compressed ? 1 : 0, 0);
  header.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([header, bytes]);
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One HTTP/1.1 request with its own connection, optionally from another loopback address. */
function h1Request(
  url: string,
  init: { method?: string; path: string; headers?: Record<string, string>; body?: Buffer; from?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = new URL(init.path, url);
    const request = http.request(
      {
        host: "127.0.0.1",
        port: target.port,
        path: target.pathname + target.search,
        method: init.method ?? "GET",
        headers: { connection: "close", ...init.headers },
        localAddress: init.from,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers as Record<string, string>,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    );
    request.on("error", reject);
    request.end(init.body);
  });
}

/** One gRPC call over HTTP/2 with prior knowledge, frames as given: its HTTP status, headers and trailers. */
function grpcCall(
  url: string,
  init: { path: string; headers?: Record<string, string>; body: Buffer },
): Promise<{ status: number; grpcStatus: string | undefined; grpcMessage: string | undefined }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": init.path,
      "content-type": "application/grpc",
      te: "trailers",
      ...init.headers,
    });
    let status = 0;
    let headerStatus: string | undefined;
    let headerMessage: string | undefined;
    stream.on("response", (headers) => {
      status = Number(headers[":status"]);
      headerStatus = headers["grpc-status"] as string | undefined;
      headerMessage = headers["grpc-message"] as string | undefined;
    });
    let trailers: http2.IncomingHttpHeaders = {};
    stream.on("trailers", (received) => {
      trailers = received;
    });
    stream.on("data", () => {});
    stream.on("close", () => {
      session.close();
      resolve({
        status,
        grpcStatus: (trailers["grpc-status"] as string | undefined) ?? headerStatus,
        grpcMessage: decodeURIComponent(
          (trailers["grpc-message"] as string | undefined) ?? headerMessage ?? "",
        ),
      });
    });
    stream.on("error", reject);
    stream.end(init.body);
  });
}

/** A tenant's gRPC `ListLogs` call opened on `session`, its frames left to the caller; errors are expected. */
function listLogsCall(session: http2.ClientHttp2Session): http2.ClientHttp2Stream {
  session.on("error", () => {});
  const stream = session.request({
    ":method": "POST",
    ":path": listLogsPath,
    "content-type": "application/grpc",
    "x-api-key": account.key,
  });
  stream.on("error", () => {});
  return stream;
}

/** Resolves when the server closes the socket; the test's own timeout fails a server that never does. */
function closedByServer(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    socket.on("error", () => {});
    socket.on("close", () => resolve());
    socket.resume();
  });
}

/** A connection of its own; half-open allowed, its side stays open when the server half-closes. */
function rawConnection(url: string, { allowHalfOpen = false } = {}): Promise<net.Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(port), host: "127.0.0.1", allowHalfOpen }, () =>
      resolve(socket),
    );
    socket.once("error", reject);
  });
}

/** Writes `text` as it is on a connection of its own; resolves with all the server sent once it closed. */
async function rawExchange(text: string): Promise<string> {
  const socket = await rawConnection(server.url);
  let answer = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => {
    answer += chunk;
  });
  const closed = closedByServer(socket);
  socket.write(text);
  await closed;
  return answer;
}

let server: ServeProcess;
const trustedProxy = "127.0.0.90";
let store: Store;
let account: TestAccount;
let brotliBomb: Buffer;
let gzipBomb: Buffer;

/** A normal authenticated request; every case ends by checking that the server still answers one. */
async function normalRequest(): Promise<number> {
  const answer = await h1Request(server.url, {
    path: `/api/v1/logs?workspaceId=${account.workspaceId}&limit=1`,
    headers: { "x-api-key": account.key },
  });
  return answer.status;
}

/** Runs the attack and returns by how much the server's peak resident memory rose above where it stood. */
async function peakGrowth(attack: () => Promise<void>): Promise<number> {
  const before = server.memory().rss;
  server.resetPeakMemory();
  await attack();
  return server.memory().peak - before;
}

beforeAll(async () => {
  server = await startServeProcess({
    // A load balancer on this one address (issue 16); nothing else here comes from it.
    FLOWLOG_TRUSTED_PROXIES: trustedProxy,
    FLOWLOG_CONNECTIONS: JSON.stringify({
      headersTimeoutMs: 1_000,
      bodyTimeoutMs: 2_000,
      keepAliveTimeoutMs: 1_000,
      http2IdleTimeoutMs: 2_000,
      protocolDetectionTimeoutMs: 1_000,
      maxConnections: 40,
      lingerMs: 1_000,
    }),
  });
  store = openStore({ dataDir: server.dataDir });
  account = await createAccount(store, "enterprise");
  // The bomb: 1 GB of zeros in 2 KB of brotli. gzip tops out near 1:1000, so its bomb holds 256 MB.
  brotliBomb = await zeroBomb(
    zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }),
    1024 * mib,
  );
  gzipBomb = await zeroBomb(zlib.createGzip({ level: 9 }), 256 * mib);
  // Warm the server up, so the bombs' figures are not the first request's compilation.
  for (let i = 0; i < 20; i++) expect(await normalRequest()).toBe(200);
});

afterAll(async () => {
  await store?.close();
  await server?.stop();
});

describe("request bodies are bounded after decompression, before they are buffered (D26, D29)", () => {
  it("refuses a stranger's brotli bomb as unauthenticated without decoding it", async () => {
    const growth = await peakGrowth(async () => {
      const answer = await h1Request(server.url, {
        method: "POST",
        path: listLogsPath,
        headers: {
          "content-type": "application/proto",
          "content-encoding": "br",
          "connect-protocol-version": "1",
        },
        body: brotliBomb,
      });
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toMatchObject({ code: "unauthenticated" });
      expect(answer.headers["x-ratelimit-limit"]).toBeUndefined();
    });
    expect(growth).toBeLessThan(memoryBudget);
    expect(await normalRequest()).toBe(200);
  });

  it("refuses an authenticated brotli and gzip bomb over Connect with resource_exhausted naming the limit", async () => {
    for (const [encoding, bomb] of [
      ["br", brotliBomb],
      ["gzip", gzipBomb],
    ] as const) {
      const growth = await peakGrowth(async () => {
        const answer = await h1Request(server.url, {
          method: "POST",
          path: listLogsPath,
          headers: {
            "content-type": "application/proto",
            "content-encoding": encoding,
            "connect-protocol-version": "1",
            "x-api-key": account.key,
          },
          body: bomb,
        });
        expect(answer.status, encoding).toBe(429);
        const error = JSON.parse(answer.body) as { code: string; message: string };
        expect(error.code, encoding).toBe("resource_exhausted");
        expect(error.message, encoding).toMatch(/1048576/);
        expect(answer.headers["x-ratelimit-limit"], encoding).toBeDefined();
      });
      expect(growth, encoding).toBeLessThan(memoryBudget);
    }
    expect(await normalRequest()).toBe(200);
  });

  it("refuses a gzip bomb in a gRPC frame, from a stranger and from a tenant", async () => {
    const frame = grpcFrame(gzipBomb, true);
    const growth = await peakGrowth(async () => {
      const stranger = await grpcCall(server.url, {
        path: listLogsPath,
        headers: { "grpc-encoding": "gzip" },
        body: frame,
      });
      expect(stranger.grpcStatus).toBe("16"); // UNAUTHENTICATED
      const tenant = await grpcCall(server.url, {
        path: listLogsPath,
        headers: { "grpc-encoding": "gzip", "x-api-key": account.key },
        body: frame,
      });
      expect(tenant.grpcStatus).toBe("8"); // RESOURCE_EXHAUSTED
      expect(tenant.grpcMessage).toMatch(/1048576/);
    });
    expect(growth).toBeLessThan(memoryBudget);
    expect(await normalRequest()).toBe(200);
  });

  it("refuses a brotli bomb in a gRPC-Web frame over HTTP/1.1", async () => {
    const growth = await peakGrowth(async () => {
      const answer = await h1Request(server.url, {
        method: "POST",
        path: listLogsPath,
        headers: {
          "content-type": "application/grpc-web+proto",
          "grpc-encoding": "br",
          "x-api-key": account.key,
        },
        body: grpcFrame(brotliBomb, true),
      });
      expect(`${JSON.stringify(answer.headers)}${answer.body}`).toMatch(/grpc-status"?:"?\s*8/);
    });
    expect(growth).toBeLessThan(memoryBudget);
    expect(await normalRequest()).toBe(200);
  });

  it("answers a REST body over the limit with 413, compressed or not, naming the limit", async () => {
    const path = `/api/v1/workspaces/${account.workspaceId}/workflows`;
    const headers = { "content-type": "application/json", "x-api-key": account.key };
    const growth = await peakGrowth(async () => {
      for (const [name, extra, body] of [
        ["gzip bomb", { "content-encoding": "gzip" }, gzipBomb],
        ["brotli bomb", { "content-encoding": "br" }, brotliBomb],
        ["plain 2 MiB", {}, Buffer.from(JSON.stringify({ name: "x".repeat(2 * mib) }))],
      ] as const) {
        const answer = await h1Request(server.url, {
          method: "POST",
          path,
          headers: { ...headers, ...extra },
          body,
        });
        expect(answer.status, name).toBe(413);
        expect(JSON.parse(answer.body), name).toMatchObject({
          status: 413,
          code: "resource_exhausted",
          detail: expect.stringMatching(/1048576 bytes/),
        });
        expect(answer.headers["x-ratelimit-remaining"], name).toBeDefined();
      }
    });
    expect(growth).toBeLessThan(memoryBudget);
    expect(await normalRequest()).toBe(200);
  });

  it("accepts a gzip-compressed REST body within the limit (D29)", async () => {
    const workflow = { name: "compressed", state: { blocks: { start: { type: "starter", name: "Start" } } } };
    const body = await promisify(zlib.gzip)(JSON.stringify(workflow));
    const answer = await h1Request(server.url, {
      method: "POST",
      path: `/api/v1/workspaces/${account.workspaceId}/workflows`,
      headers: { "content-type": "application/json", "content-encoding": "gzip", "x-api-key": account.key },
      body,
    });
    expect(answer.status, answer.body).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ workflow: { name: "compressed" } });
  });

  it("answers a malformed binary message with invalid_argument, never internal", async () => {
    const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    const connect = await h1Request(server.url, {
      method: "POST",
      path: listLogsPath,
      headers: {
        "content-type": "application/proto",
        "connect-protocol-version": "1",
        "x-api-key": account.key,
      },
      body: garbage,
    });
    expect(connect.status).toBe(400);
    expect(JSON.parse(connect.body)).toMatchObject({ code: "invalid_argument" });
    const grpc = await grpcCall(server.url, {
      path: listLogsPath,
      headers: { "x-api-key": account.key },
      body: grpcFrame(garbage, false),
    });
    expect(grpc.grpcStatus).toBe("3"); // INVALID_ARGUMENT
    expect(await normalRequest()).toBe(200);
  });
});

describe("a refusal reaches a client still sending its body (RFC 9112 section 9.6, D27)", () => {
  // Far more than the sockets' buffers hold: the client is still writing when the answer comes.
  const huge = Buffer.alloc(48 * mib, "x");
  const workflowsPath = () => `/api/v1/workspaces/${account.workspaceId}/workflows`;

  /**
   * Sends a request's head and its whole body before reading a byte of the answer, and gives up at the first
   * failed write, as Node's http client does when the reset reaches it before it parsed the answer; then
   * reads what the server said until it closed. A server that closed at once after answering resets the
   * connection under the upload, every time here, and under load for Node's client (curl and Python's
   * requests read the answer after a failed write, and got it from such a server too).
   */
  async function uploadThenRead(
    head: Record<string, string> & { request: string },
    body: Buffer,
    { chunked }: { chunked: boolean },
  ): Promise<string> {
    const socket = await rawConnection(server.url, { allowHalfOpen: true });
    socket.pause();
    const { request, ...fields } = head;
    const lines = Object.entries({
      host: "localhost",
      ...fields,
      ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(body.length) }),
    }).map(([name, value]) => `${name}: ${value}\r\n`);
    const framed = chunked
      ? [Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")]
      : [body];
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      const whole = Buffer.concat([Buffer.from(`${request}\r\n${lines.join("")}\r\n`), ...framed]);
      socket.write(whole, (error) => (error ? reject(error) : resolve()));
    });
    let said = "";
    socket.on("data", (chunk: Buffer) => {
      said += chunk.toString("latin1");
    });
    socket.end();
    await closedByServer(socket);
    return said;
  }

  /** The JSON body of a raw answer, its chunked framing undone. */
  function answerBody(said: string): unknown {
    const split = said.indexOf("\r\n\r\n");
    const rest = said.slice(split + 4);
    if (!/transfer-encoding: chunked/i.test(said.slice(0, split))) return JSON.parse(rest);
    let body = "";
    for (let at = 0; ; ) {
      const lineEnd = rest.indexOf("\r\n", at);
      const size = Number.parseInt(rest.slice(at, lineEnd), 16);
      if (!(size > 0)) break;
      body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      at = lineEnd + 2 + size + 2;
    }
    return JSON.parse(body);
  }

  it("answers a REST body far over the limit with 413, whether its length was declared or it came chunked", async () => {
    for (const chunked of [false, true]) {
      const said = await uploadThenRead(
        {
          request: `POST ${workflowsPath()} HTTP/1.1`,
          "content-type": "application/json",
          "x-api-key": account.key,
        },
        huge,
        { chunked },
      );
      expect(said, `chunked: ${chunked}`).toMatch(/^HTTP\/1\.1 413 /);
      expect(said.toLowerCase()).toContain("connection: close");
      expect(answerBody(said)).toMatchObject({ detail: expect.stringMatching(/1048576 bytes/) });
    }
    expect(await normalRequest()).toBe(200);
  });

  it("answers a Connect call whose chunked body passes the limit with resource_exhausted", async () => {
    const said = await uploadThenRead(
      {
        request: `POST ${listLogsPath} HTTP/1.1`,
        "content-type": "application/json",
        "connect-protocol-version": "1",
        "x-api-key": account.key,
      },
      huge,
      { chunked: true },
    );
    expect(said).toMatch(/^HTTP\/1\.1 429 /);
    expect(answerBody(said)).toMatchObject({
      code: "resource_exhausted",
      message: expect.stringMatching(/1048576/),
    });
    expect(await normalRequest()).toBe(200);
  });

  it("answers a stranger's huge upload with 401, over REST and Connect", async () => {
    for (const path of [workflowsPath(), listLogsPath]) {
      const said = await uploadThenRead(
        {
          request: `POST ${path} HTTP/1.1`,
          "content-type": "application/json",
          "connect-protocol-version": "1",
        },
        huge,
        { chunked: false },
      );
      expect(said, path).toMatch(/^HTTP\/1\.1 401 /);
    }
    expect(await normalRequest()).toBe(200);
  });

  it("answers a gRPC message over the limit, sent in many frames of HTTP/2, with RESOURCE_EXHAUSTED", async () => {
    const call = await grpcCall(server.url, {
      path: listLogsPath,
      headers: { "x-api-key": account.key },
      body: grpcFrame(Buffer.alloc(8 * mib), false),
    });
    expect(call.grpcStatus).toBe("8");
    expect(call.grpcMessage).toMatch(/1048576/);
    expect(await normalRequest()).toBe(200);
  });

  it("stops reading a client that goes on sending once the lingering time is up", async () => {
    const socket = await rawConnection(server.url, { allowHalfOpen: true });
    let said = "";
    socket.on("data", (chunk: Buffer) => {
      said += chunk.toString("latin1");
    });
    const closed = closedByServer(socket);
    socket.write(
      `POST ${workflowsPath()} HTTP/1.1\r\nHost: x\r\nx-api-key: ${account.key}\r\n` +
        `content-type: application/json\r\ncontent-length: ${1024 * mib}\r\n\r\n`,
    );
    const piece = Buffer.alloc(64 * 1024, " ");
    let answeredAt = 0;
    const pouring = setInterval(() => {
      if (answeredAt === 0 && said.includes("\r\n\r\n")) answeredAt = performance.now();
      if (socket.writable) socket.write(piece);
    }, 5);
    await closed;
    clearInterval(pouring);
    const heldMs = performance.now() - answeredAt;
    expect(said).toMatch(/^HTTP\/1\.1 413 /);
    expect(answeredAt).toBeGreaterThan(0);
    // The lingering time is 1 s here (beforeAll); the server may take a little more, never the body's whole.
    expect(heldMs).toBeLessThan(4_000);
    expect(await normalRequest()).toBe(200);
  });
});

describe("request targets and hosts the server cannot read are refused, never fatal (D10)", () => {
  /** `head` and its body, on a connection that closes after the answer. */
  const rawRequest = (head: string, body = "") =>
    rawExchange(`${head}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);

  it("answers a Connect call whose Host is no host name as the call it is", async () => {
    // The Host used to go into the call's URL, whose parse threw in the request listener: the process died.
    const answer = await rawRequest(
      `POST ${listLogsPath} HTTP/1.1\r\nhost: a b\r\nx-api-key: ${account.key}\r\ncontent-type: application/json`,
      JSON.stringify({ workspaceId: account.workspaceId, limit: 1 }),
    );
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
    expect(await normalRequest()).toBe(200);
  });

  it("answers a gRPC call whose :authority has a port out of range", async () => {
    const request = toBinary(
      ListLogsRequestSchema,
      create(ListLogsRequestSchema, { workspaceId: account.workspaceId, limit: 1 }),
    );
    const call = await grpcCall(server.url, {
      path: listLogsPath,
      headers: { ":authority": "x:99999", "x-api-key": account.key },
      body: grpcFrame(Buffer.from(request), false),
    });
    expect(call.grpcStatus).toBe("0");
    expect(await normalRequest()).toBe(200);
  });

  it("refuses a request target that is no URL with 400 naming it", async () => {
    for (const target of ["http://[", "http://[/api/v1/logs", "http://a b/api/v1/logs"]) {
      const answer = await rawRequest(`GET ${target} HTTP/1.1\r\nhost: localhost`);
      // Node's parser refuses some targets itself (400 with no body); the rest reach the server's check.
      expect(answer.split("\r\n")[0], target).toBe("HTTP/1.1 400 Bad Request");
      if (answer.includes("application/problem+json"))
        expect(answer, target).toContain("the request target is not a valid URL");
    }
    expect(await normalRequest()).toBe(200);
  });
});

describe("what one request may ask for is bounded (D26)", () => {
  it("a 10,000-id filter is refused naming the parameter and its limit, over Connect and REST", async () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `wf_${i.toString().padStart(16, "0")}`);
    const connect = await h1Request(server.url, {
      method: "POST",
      path: listLogsPath,
      headers: {
        "content-type": "application/json",
        "connect-protocol-version": "1",
        "x-api-key": account.key,
      },
      body: Buffer.from(JSON.stringify({ workspaceId: account.workspaceId, workflowIds: ids })),
    });
    expect(connect.status).toBe(400);
    expect(JSON.parse(connect.body)).toMatchObject({
      code: "invalid_argument",
      message: expect.stringMatching(/workflowIds.*100/),
    });
    const rest = await h1Request(server.url, {
      path: `/api/v1/logs?workspaceId=${account.workspaceId}&workflowIds=${ids.slice(0, 101).join(",")}`,
      headers: { "x-api-key": account.key },
    });
    expect(rest.status).toBe(400);
    expect(JSON.parse(rest.body)).toMatchObject({ errors: [{ field: "workflowIds" }] });
    expect(await normalRequest()).toBe(200);
  });

  it("a workflow that could run 2,000 api blocks is refused on save, naming the loop", async () => {
    const api = {
      type: "api",
      name: "API",
      config: { method: "GET", url: "https://example.com", retries: 1000000 },
    };
    const answer = await h1Request(server.url, {
      method: "POST",
      path: `/api/v1/workspaces/${account.workspaceId}/workflows`,
      headers: { "content-type": "application/json", "x-api-key": account.key },
      body: Buffer.from(
        JSON.stringify({
          name: "unbounded",
          state: {
            blocks: { start: { type: "starter", name: "Start" }, api },
            edges: [{ source: "start", target: "outer" }],
            loops: {
              outer: { type: "for", iterations: 100, nodes: ["inner"] },
              inner: { type: "for", iterations: 20, nodes: ["api"] },
            },
          },
        }),
      ),
    });
    expect(answer.status, answer.body).toBe(400);
    const fields = (JSON.parse(answer.body) as { errors: { field: string }[] }).errors.map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(["state.blocks.api.config.retries"]));
    expect(fields.some((field) => field.startsWith("state.loops") || field === "state")).toBe(true);
    expect(await normalRequest()).toBe(200);
  });
});

describe("order of checks: authenticate, take the token, validate, authorize (D28)", () => {
  it("every invalid REST request with a valid key takes a token and carries the rate headers", async () => {
    // The free plan's burst is 20 and one token comes back every 6 s: the 21st invalid request in a row is 429.
    const free = await createAccount(store, "free");
    const path = `/api/v1/logs?workspaceId=${free.workspaceId}&limit=abc`;
    const answers: Answer[] = [];
    for (let i = 0; i < 21; i++)
      answers.push(await h1Request(server.url, { path, headers: { "x-api-key": free.key } }));
    const first = answers[0] as Answer;
    expect(first.status).toBe(400);
    expect(JSON.parse(first.body)).toMatchObject({ code: "invalid_argument", errors: [{ field: "limit" }] });
    expect(first.headers["x-ratelimit-remaining"]).toBe("19");
    expect(
      answers
        .slice(0, 20)
        .every((answer) => answer.status === 400 && answer.headers["x-ratelimit-limit"] === "10"),
    ).toBe(true);
    expect(answers[20]?.status).toBe(429);
  });

  it("a stranger is refused 401 before the call's other headers are looked at, on Connect and gRPC", async () => {
    const body = Buffer.from(JSON.stringify({ workspaceId: account.workspaceId }));
    const connectHeaders: Record<string, string>[] = [
      { "connect-timeout-ms": "soon" },
      { "content-encoding": "snappy" },
    ];
    for (const strange of connectHeaders) {
      const answer = await h1Request(server.url, {
        method: "POST",
        path: listLogsPath,
        headers: { "content-type": "application/json", "connect-protocol-version": "1", ...strange },
        body,
      });
      expect({ status: answer.status, code: JSON.parse(answer.body).code }, JSON.stringify(strange)).toEqual({
        status: 401,
        code: "unauthenticated",
      });
    }
    const request = toBinary(
      ListLogsRequestSchema,
      create(ListLogsRequestSchema, { workspaceId: account.workspaceId }),
    );
    const grpcHeaders: Record<string, string>[] = [{ "grpc-timeout": "soon" }, { "grpc-encoding": "snappy" }];
    for (const strange of grpcHeaders) {
      const call = await grpcCall(server.url, {
        path: listLogsPath,
        headers: strange,
        body: grpcFrame(Buffer.from(request), false),
      });
      expect(call.grpcStatus, JSON.stringify(strange)).toBe("16"); // UNAUTHENTICATED
    }
    expect(await normalRequest()).toBe(200);
  });

  it("a stranger's Connect or gRPC-Web call over HTTP/1.1 is refused without its body being read", async () => {
    for (const [protocol, type] of [
      ["Connect", "application/json"],
      ["gRPC-Web", "application/grpc-web+proto"],
    ]) {
      // A megabyte announced, ten bytes sent: kept alive, the connection would wait for the rest.
      const answer = await rawExchange(
        `POST ${listLogsPath} HTTP/1.1\r\nhost: localhost\r\ncontent-type: ${type}\r\ncontent-length: ${mib}\r\n\r\n0123456789`,
      );
      const head = answer.slice(0, answer.indexOf("\r\n\r\n")).toLowerCase();
      if (protocol === "Connect") expect(head, protocol).toMatch(/^http\/1\.1 401/);
      // gRPC-Web's status is in its headers, or in the trailer frame of its body.
      else expect(answer.toLowerCase(), protocol).toMatch(/grpc-status: ?16/);
      expect(head, protocol).toContain("connection: close");
    }
    expect(await normalRequest()).toBe(200);
  });

  it("an invalid request without a key is 401 with no rate headers, before its parameters are looked at", async () => {
    const answer = await h1Request(server.url, { path: "/api/v1/logs?limit=abc" });
    expect(answer.status).toBe(401);
    expect(answer.headers["x-ratelimit-limit"]).toBeUndefined();
  });

  it("a workspace the key cannot see is 403 after validation, with the rate headers", async () => {
    const answer = await h1Request(server.url, {
      path: "/api/v1/logs?workspaceId=ws_someone_else",
      headers: { "x-api-key": account.key },
    });
    expect(answer.status).toBe(403);
    expect(answer.headers["x-ratelimit-limit"]).toBeDefined();
  });
});

describe("connections cannot be held open for free (D27)", () => {
  it("closes a connection that never says which protocol it speaks", async () => {
    const socket = await rawConnection(server.url);
    await closedByServer(socket);
    expect(await normalRequest()).toBe(200);
  });

  /** Sends `start`, then one more byte every 200 ms, until the server closes the connection. */
  async function trickleUntilClosed(start: string, drip: string): Promise<void> {
    const socket = await rawConnection(server.url);
    socket.write(start);
    const trickle = setInterval(() => socket.writable && socket.write(drip), 200);
    await closedByServer(socket);
    clearInterval(trickle);
  }

  it("closes an HTTP/1.1 connection whose headers never finish", async () => {
    await trickleUntilClosed("GET /api/v1/logs HTTP/1.1\r\nHost: x\r\nx-api-key: ", "a");
    expect(await normalRequest()).toBe(200);
  });

  /** Sends `head`, then nothing; resolves with what the server said and how long it kept the connection. */
  async function halfSentHead(head = "GET /api/v1/logs HTTP/1.1\r\nHost: x\r\n", socket?: net.Socket) {
    const connection = socket ?? (await rawConnection(server.url));
    let said = "";
    connection.on("data", (chunk: Buffer) => {
      said += chunk.toString("latin1");
    });
    const started = performance.now();
    connection.write(head);
    await closedByServer(connection);
    return { said, heldMs: performance.now() - started };
  }

  // The server's headers timeout is 1 s (beforeAll); its checks may add a little, never several seconds.
  const headersLimitMs = 3_000;

  it("closes a connection whose request head stops half-way with 408, alone, several at once, and after other traffic", async () => {
    const alone = await halfSentHead();
    expect(alone.said).toMatch(/^HTTP\/1\.1 408 /);
    expect(alone.heldMs).toBeLessThan(headersLimitMs);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 10; i++) expect(await normalRequest()).toBe(200);
      const together = await Promise.all([halfSentHead(), halfSentHead(), halfSentHead()]);
      for (const { said, heldMs } of together) {
        expect(said).toMatch(/^HTTP\/1\.1 408 /);
        expect(heldMs).toBeLessThan(headersLimitMs);
      }
    }
  });

  it("closes a keep-alive connection whose next request head stops half-way", async () => {
    const socket = await rawConnection(server.url);
    const answered = new Promise<void>((resolve) => {
      let said = "";
      const onData = (chunk: Buffer) => {
        said += chunk.toString("latin1");
        if (said.includes("\r\n\r\n")) {
          socket.off("data", onData);
          resolve();
        }
      };
      socket.on("data", onData);
    });
    socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    await answered;
    const next = await halfSentHead(undefined, socket);
    expect(next.said).toMatch(/^HTTP\/1\.1 408 /);
    // Awaited from the first answer's end: the keep-alive timeout (1 s) and the headers timeout (1 s).
    expect(next.heldMs).toBeLessThan(headersLimitMs + 1_000);
  });

  it("closes an HTTP/1.1 request whose body never finishes", async () => {
    await trickleUntilClosed(
      `POST /api/v1/workspaces/${account.workspaceId}/workflows HTTP/1.1\r\nHost: x\r\n` +
        `x-api-key: ${account.key}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{`,
      " ",
    );
    expect(await normalRequest()).toBe(200);
  });

  it("closes an idle HTTP/1.1 keep-alive connection", async () => {
    const socket = await rawConnection(server.url);
    socket.write(
      `GET /api/v1/logs?workspaceId=${account.workspaceId}&limit=1 HTTP/1.1\r\nHost: x\r\nx-api-key: ${account.key}\r\n\r\n`,
    );
    await closedByServer(socket);
    expect(await normalRequest()).toBe(200);
  });

  it("ends an HTTP/2 stream whose body never finishes, and an idle HTTP/2 session", async () => {
    const session = http2.connect(server.url);
    const closed = new Promise<void>((resolve) => session.on("close", () => resolve()));
    const stream = listLogsCall(session);
    stream.write(Buffer.from([0, 0, 0, 0, 100]));
    const streamClosed = new Promise<void>((resolve) => stream.on("close", () => resolve()));
    await streamClosed;
    await closed;
    expect(await normalRequest()).toBe(200);
  });

  it("survives gRPC clients that reset their connection in the middle of a call", async () => {
    const { port } = new URL(server.url);
    const request = toBinary(
      ListLogsRequestSchema,
      create(ListLogsRequestSchema, { workspaceId: account.workspaceId, limit: 1 }),
    );
    for (let i = 0; i < 3; i++) {
      const socket = net.connect(Number(port), "127.0.0.1");
      await new Promise((resolve, reject) => {
        socket.once("connect", resolve);
        socket.once("error", reject);
      });
      socket.on("error", () => {});
      // No flow-control window: the server can send the answer's headers but none of its data.
      const session = http2.connect(server.url, {
        createConnection: () => socket,
        settings: { initialWindowSize: 0 },
      });
      const stream = listLogsCall(session);
      const answering = new Promise((resolve) => {
        stream.once("response", resolve);
        stream.once("close", resolve);
      });
      stream.end(grpcFrame(Buffer.from(request), false));
      // The server has read the call and is writing its answer when the reset comes.
      await answering;
      socket.resetAndDestroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await normalRequest()).toBe(200);
    const call = await grpcCall(server.url, {
      path: listLogsPath,
      headers: { "x-api-key": account.key },
      body: grpcFrame(Buffer.from(request), false),
    });
    expect(call.grpcStatus).toBe("0");
  });

  it("refuses connections beyond the per-process cap, and serves again once they close", async () => {
    const sockets = await Promise.all(Array.from({ length: 45 }, () => rawConnection(server.url)));
    // Node closes each connection over the cap as it is accepted.
    const closedAtOnce = await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<boolean>((resolve) => {
            socket.on("error", () => {});
            socket.once("close", () => resolve(true));
            setTimeout(() => resolve(false), 300);
          }),
      ),
    );
    expect(closedAtOnce.filter(Boolean).length).toBeGreaterThanOrEqual(5);
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await normalRequest()).toBe(200);
  });
});

describe("failed authentication is throttled per client address (D26)", () => {
  /** A logs request with `key`, from another loopback address than the other tests use. */
  const withKey = (from: string, key: string) =>
    h1Request(server.url, {
      path: `/api/v1/logs?workspaceId=${account.workspaceId}`,
      headers: { "x-api-key": key },
      from,
    });
  /** A call of an inbound webhook with a token that does not exist. */
  const webhookGuess = (from: string) =>
    h1Request(server.url, {
      method: "POST",
      path: "/api/v1/webhooks/wf_x/whk_guess",
      headers: { "content-type": "application/json" },
      body: Buffer.from("{}"),
      from,
    });

  it("refuses an address's 21st failure in a minute with 429 and Retry-After, and spares other addresses", async () => {
    const from = "127.0.0.77";
    for (let i = 0; i < 20; i++) expect((await withKey(from, "flk_guessed")).status).toBe(401);
    const throttled = await withKey(from, "flk_guessed");
    expect(throttled.status).toBe(429);
    expect(JSON.parse(throttled.body)).toMatchObject({ code: "resource_exhausted" });
    expect(Number(throttled.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // While throttled, the address gets no verdict on any credential, a right key included.
    expect((await withKey(from, account.key)).status).toBe(429);
    expect((await webhookGuess(from)).status).toBe(429);
    // Another address is not affected.
    expect(await normalRequest()).toBe(200);
  });

  /** A logs request with `key` through the trusted proxy, for the client its X-Forwarded-For names. */
  const via = (client: string, key: string) =>
    h1Request(server.url, {
      path: `/api/v1/logs?workspaceId=${account.workspaceId}`,
      headers: { "x-api-key": key, "x-forwarded-for": `198.51.100.250, ${client}` },
      from: trustedProxy,
    });

  it("behind a trusted proxy (FLOWLOG_TRUSTED_PROXIES), counts the client X-Forwarded-For names, not the proxy", async () => {
    for (let i = 0; i < 20; i++) expect((await via("203.0.113.7", "flk_guessed")).status).toBe(401);
    expect((await via("203.0.113.7", "flk_guessed")).status).toBe(429);
    // Another client behind the same proxy is spared; the left-hand entry, the client's own say, is ignored.
    expect((await via("203.0.113.8", account.key)).status).toBe(200);
  });

  // Loopback IPv6 is ::1 alone, so the clients of other networks are named by the trusted proxy.
  it("counts an IPv6 client by its /64: new addresses in it are the same client, another /64 is spared", async () => {
    const inNetwork = (host: number) => `2001:db8:7:1:${host.toString(16)}::${host.toString(16)}`;
    for (let i = 1; i <= 20; i++) expect((await via(inNetwork(i), "flk_guessed")).status).toBe(401);
    const throttled = await via("2001:db8:7:1:ffff:ffff:ffff:fffe", account.key);
    expect(throttled.status).toBe(429);
    expect(JSON.parse(throttled.body)).toMatchObject({ code: "resource_exhausted" });
    expect(Number(throttled.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await via("2001:db8:7:2::1", account.key)).status).toBe(200);
  });

  it("counts an IPv4-mapped IPv6 client as its IPv4 address, not as one /64 holding every IPv4 client", async () => {
    for (let i = 0; i < 20; i++) expect((await via("::ffff:203.0.113.60", "flk_guessed")).status).toBe(401);
    expect((await via("203.0.113.60", account.key)).status).toBe(429);
    expect((await via("::ffff:203.0.113.61", account.key)).status).toBe(200);
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy: the header cannot dodge the throttle", async () => {
    const from = "127.0.0.91";
    const claiming = (client: string, key: string) =>
      h1Request(server.url, {
        path: `/api/v1/logs?workspaceId=${account.workspaceId}`,
        headers: { "x-api-key": key, "x-forwarded-for": client },
        from,
      });
    for (let i = 0; i < 20; i++)
      expect((await claiming(`203.0.113.${i + 20}`, "flk_guessed")).status).toBe(401);
    expect((await claiming("203.0.113.99", account.key)).status).toBe(429);
  });

  it("counts wrong webhook-trigger tokens as failed authentications", async () => {
    const from = "127.0.0.78";
    for (let i = 0; i < 20; i++) expect((await webhookGuess(from)).status).toBe(404);
    expect((await webhookGuess(from)).status).toBe(429);
  });

  it("counts no guess and holds no turn for a body refused before the token is checked: after 25, the address still has its 20", async () => {
    const from = "127.0.0.81";
    const withinSeconds = <T>(answer: Promise<T>) =>
      Promise.race([
        answer,
        new Promise<string>((resolve) => setTimeout(() => resolve("still waiting"), 5_000)),
      ]);
    // A body that is no JSON, over REST and over Connect: refused before the service sees the token.
    const malformed = (path: string) =>
      h1Request(server.url, {
        method: "POST",
        path,
        headers: { "content-type": "application/json" },
        body: Buffer.from("{"),
        from,
      }).then((answer) => answer.status);
    for (let i = 0; i < 25; i++) {
      expect(await withinSeconds(malformed("/api/v1/webhooks/wf_x/whk_guess"))).toBe(400);
      expect(await withinSeconds(malformed("/flowlog.workflows.v1.TriggersService/InvokeWebhook"))).toBe(400);
    }
    for (let i = 0; i < 20; i++)
      expect(await withinSeconds(webhookGuess(from).then((a) => a.status))).toBe(404);
    expect(await withinSeconds(webhookGuess(from).then((a) => a.status))).toBe(429);
  });

  it("looks at no more than 20 guesses of an address sent all at once: the rest wait their turn and get 429", async () => {
    // 60 streams of one HTTP/2 connection arrive together, and each webhook token is checked by its service
    // after the body is read, long after admission: counted only as they failed, all 60 would be tried.
    const statuses = await h2Requests(server.url, "127.0.0.79", 60, {
      ":method": "POST",
      ":path": "/api/v1/webhooks/wf_x/whk_guess",
      "content-type": "application/json",
      body: "{}",
    });
    const count = (status: number) => statuses.filter((status_) => status_ === status).length;
    expect({ tried: count(404), throttled: count(429) }).toEqual({ tried: 20, throttled: 40 });
  });
});
