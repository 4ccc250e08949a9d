import http2 from "node:http2";
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ListLogsRequestSchema, LogsService } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { defaultCompressMinBytes } from "../src/gateway/response-encoding.js";
import { seedWorkspace } from "../src/seed/seed.js";
import { rest } from "./support/api-server.js";
import { createAccount, startFlowlog, type TestAccount, type TestFlowlog } from "./support/flowlog.js";

// D29: an answer is compressed only when the client accepts an encoding and the body is at least
// FLOWLOG_COMPRESS_MIN_BYTES (64 KiB by default); every gRPC client accepts gzip, so small answers must not be.

let flowlog: TestFlowlog;
let alice: TestAccount;

beforeAll(async () => {
  flowlog = await startFlowlog();
  alice = await createAccount(flowlog.store);
  await seedWorkspace(flowlog.store, {
    workspaceId: alice.workspaceId,
    executions: 150,
    seed: "compression",
  });
});
afterAll(() => flowlog?.close());

const bigPage = "limit=100&includeTraceSpans=true&includeFinalOutput=true&details=full";
/** Above Connect's own default threshold (1 KiB), below D29's. */
const smallPage = "limit=10&details=full";

function listLogs(query: string, acceptEncoding?: string) {
  return rest(flowlog.server.url, `/api/v1/logs?workspaceId=${alice.workspaceId}&${query}`, {
    headers: { "x-api-key": alice.key, ...(acceptEncoding ? { "accept-encoding": acceptEncoding } : {}) },
  });
}

describe("REST answers (D29)", () => {
  it("a page of at least 64 KiB is compressed for a client that accepts gzip, and decodes to the same JSON", async () => {
    const plain = await listLogs(bigPage, "identity");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(Buffer.byteLength(plain.text)).toBeGreaterThanOrEqual(defaultCompressMinBytes);
    const gzipped = await listLogs(bigPage, "gzip");
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(gzipped.headers.vary).toBe("accept-encoding");
    // Each call takes a token, so only limits.remaining may differ.
    const { limits: _plainLimits, ...plainPage } = plain.json as Record<string, unknown>;
    const { limits: _gzippedLimits, ...gzippedPage } = gzipped.json as Record<string, unknown>;
    expect(gzippedPage).toEqual(plainPage);
  });

  it("prefers br when both are accepted, and honours q=0", async () => {
    expect((await listLogs(bigPage, "gzip, deflate, br")).headers["content-encoding"]).toBe("br");
    expect((await listLogs(bigPage, "gzip;q=1, br;q=0")).headers["content-encoding"]).toBe("gzip");
    expect((await listLogs(bigPage, "br;q=0, gzip;q=0")).headers["content-encoding"]).toBeUndefined();
  });

  it("a small answer goes uncompressed even to a client that accepts gzip", async () => {
    const small = await listLogs(smallPage, "gzip, br");
    expect(small.status).toBe(200);
    expect(Buffer.byteLength(small.text)).toBeLessThan(defaultCompressMinBytes);
    expect(Buffer.byteLength(small.text)).toBeGreaterThan(1024);
    expect(small.headers["content-encoding"]).toBeUndefined();
  });
});

describe("gRPC answers (D29)", () => {
  /**
   * The compressed flag of the answer's one message, as a gRPC client that accepts gzip receives it: the
   * first byte of its length-prefixed frame (the grpc-encoding header only names what the server may use).
   */
  const compressedFlagOf = async (request: MessageInitShape<typeof ListLogsRequestSchema>) => {
    const session = http2.connect(flowlog.server.url);
    try {
      const message = toBinary(ListLogsRequestSchema, create(ListLogsRequestSchema, request));
      const frame = Buffer.alloc(5 + message.length);
      frame.writeUInt32BE(message.length, 1);
      frame.set(message, 5);
      const stream = session.request({
        ":method": "POST",
        ":path": "/flowlog.logs.v1.LogsService/ListLogs",
        "content-type": "application/grpc",
        te: "trailers",
        "grpc-accept-encoding": "gzip",
        "x-api-key": alice.key,
      });
      stream.end(frame);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      const answer = Buffer.concat(chunks);
      expect(answer.length).toBeGreaterThan(5);
      return answer[0];
    } finally {
      session.close();
    }
  };

  it("a small answer is not gzipped although the client accepts gzip; a large one is", async () => {
    expect(await compressedFlagOf({ workspaceId: alice.workspaceId, limit: 10, details: "full" })).toBe(0);
    const big = { workspaceId: alice.workspaceId, limit: 100, includeTraceSpans: true, details: "full" };
    expect(await compressedFlagOf(big)).toBe(1);
  });

  it("an error is still a plain gRPC status", async () => {
    const client = createClient(LogsService, createGrpcTransport({ baseUrl: flowlog.server.url }));
    const error = await client
      .listLogs({ workspaceId: alice.workspaceId, limit: 0 }, { headers: { "x-api-key": alice.key } })
      .catch((e: unknown) => ConnectError.from(e));
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
  });
});
