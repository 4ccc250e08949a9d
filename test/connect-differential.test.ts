import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { GetLogRequestSchema } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { call, differentialServersFor, flowlogAnswers, type Sent } from "./support/unary-differential.js";

/**
 * flowlog's RPC layer answers the Connect protocol's unary POST with a handler of its own
 * (src/rpc/connect-unary.ts), mounted by its router (src/rpc/router.ts) and written back through its own
 * Node adapter (src/rpc/node-adapter.ts, issue 50); GET stays connect-es's handler. The promise: on the wire it answers what connect-es answers. Two servers mount the same
 * implementation, one by connect-es alone (`connectNodeAdapter`) and one by flowlog's RPC layer, and
 * every case below is sent to both as a raw request, over HTTP/1.1 and over HTTP/2, and compared byte for
 * byte: status, headers and body. Pinned connect-es (package.json): an upgrade that changes its wire fails
 * here.
 */
const urls = differentialServersFor(["HTTP/1.1", "HTTP/2"]);

const getLog = "/flowlog.logs.v1.LogsService/GetLog";
const listLogs = "/flowlog.logs.v1.LogsService/ListLogs";
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const jsonHeaders = { "content-type": "application/json" };
const protoHeaders = { "content-type": "application/proto" };
const getLogOf = (id: string) => toBinary(GetLogRequestSchema, create(GetLogRequestSchema, { id }));

const cases: (readonly [string, () => Promise<Sent>])[] = [
  ["an answer as JSON", async () => ({ path: getLog, headers: jsonHeaders, body: json({ id: "log_1" }) })],
  ["an answer as binary", async () => ({ path: getLog, headers: protoHeaders, body: getLogOf("log_1") })],
  [
    "a content type with a charset",
    async () => ({
      path: getLog,
      headers: { "content-type": "application/json; charset=utf-8" },
      body: json({ id: "log_1" }),
    }),
  ],
  [
    "a deadline (connect-timeout-ms)",
    async () => ({
      path: getLog,
      headers: { ...jsonHeaders, "connect-timeout-ms": "5000" },
      body: json({ id: "log_1" }),
    }),
  ],
  [
    "a deadline that passes",
    async () => ({
      path: getLog,
      headers: { ...jsonHeaders, "connect-timeout-ms": "50" },
      body: json({ id: "slow" }),
    }),
  ],
  [
    "a malformed connect-timeout-ms",
    async () => ({
      path: getLog,
      headers: { ...jsonHeaders, "connect-timeout-ms": "soon" },
      body: json({ id: "log_1" }),
    }),
  ],
  [
    "an error with details",
    async () => ({ path: getLog, headers: jsonHeaders, body: json({ id: "invalid" }) }),
  ],
  [
    "an error with metadata",
    async () => ({ path: getLog, headers: protoHeaders, body: getLogOf("throttled") }),
  ],
  [
    "an error carrying protocol headers in its metadata",
    async () => ({ path: getLog, headers: jsonHeaders, body: json({ id: "protocol metadata" }) }),
  ],
  ["a fault", async () => ({ path: getLog, headers: jsonHeaders, body: json({ id: "fault" }) })],
  [
    "a large answer to a client that accepts gzip",
    async () => ({
      path: listLogs,
      headers: { ...jsonHeaders, "accept-encoding": "gzip" },
      body: json({ workspaceId: "ws_1", limit: 100 }),
    }),
  ],
  [
    "a small answer to a client that accepts gzip",
    async () => ({
      path: listLogs,
      headers: { ...jsonHeaders, "accept-encoding": "gzip" },
      body: json({ workspaceId: "ws_1", limit: 1 }),
    }),
  ],
  [
    "a gzip request",
    async () => ({
      path: getLog,
      headers: { ...jsonHeaders, "content-encoding": "gzip" },
      body: await promisify(gzip)(json({ id: "log_1" })),
    }),
  ],
  [
    "a gzip request with a large gzip answer",
    async () => ({
      path: listLogs,
      headers: { ...jsonHeaders, "content-encoding": "gzip", "accept-encoding": "gzip" },
      body: await promisify(gzip)(json({ workspaceId: "ws_1", limit: 100 })),
    }),
  ],
  [
    "a gzip request that inflates past the limit",
    async () => ({
      path: getLog,
      headers: { ...jsonHeaders, "content-encoding": "gzip" },
      body: await promisify(gzip)(json({ id: "x".repeat(100_000) })),
    }),
  ],
  [
    "an unknown request encoding",
    async () => ({
      path: getLog,
      headers: { ...jsonHeaders, "content-encoding": "snappy" },
      body: json({ id: "log_1" }),
    }),
  ],
  [
    "a body over the limit",
    async () => ({ path: getLog, headers: jsonHeaders, body: json({ id: "x".repeat(2_000) }) }),
  ],
  [
    "a chunked body within the limit",
    async () => ({
      path: getLog,
      headers: jsonHeaders,
      pieces: [Buffer.from('{"id":'), Buffer.from('"log_1"}')],
    }),
  ],
  [
    "a chunked body that passes the limit",
    async () => ({
      path: getLog,
      headers: jsonHeaders,
      pieces: [
        Buffer.from('{"id":"'),
        Buffer.from("x".repeat(700)),
        Buffer.from("x".repeat(700)),
        Buffer.from('"}'),
      ],
    }),
  ],
  ["malformed JSON", async () => ({ path: getLog, headers: jsonHeaders, body: Buffer.from("{not json") })],
  ["an unknown JSON field", async () => ({ path: getLog, headers: jsonHeaders, body: json({ nope: 1 }) })],
  [
    "a malformed binary message",
    async () => ({ path: getLog, headers: protoHeaders, body: Buffer.from([0xff, 0xff, 0xff]) }),
  ],
  ["an empty JSON body", async () => ({ path: getLog, headers: jsonHeaders, body: new Uint8Array() })],
  ["an empty binary body", async () => ({ path: getLog, headers: protoHeaders, body: new Uint8Array() })],
  [
    "a streaming content type",
    async () => ({ path: getLog, headers: { "content-type": "application/connect+json" }, body: json({}) }),
  ],
  [
    "a GET request, refused: no method declares an idempotency level",
    async () => ({
      path: `${getLog}?encoding=json&message=${encodeURIComponent(JSON.stringify({ id: "log_1" }))}`,
      method: "GET",
      headers: {},
    }),
  ],
];

describe.each(["HTTP/1.1", "HTTP/2"] as const)(
  "unary Connect answers as connect-es answers them, over %s",
  (transport) => {
    it.each(cases)("%s", async (_name, build) => {
      const sent = await build();
      const { connectUrl, flowlogUrl } = urls(transport);
      expect(await call(transport, flowlogUrl, sent)).toEqual(await call(transport, connectUrl, sent));
    });

    it("the cases cover answers, errors, deadlines and compression on the wire", async () => {
      const seen = await flowlogAnswers(transport, urls(transport).flowlogUrl, cases);
      const answer = seen.get("an answer as JSON");
      expect(answer?.status).toBe(200);
      expect(answer?.headers["x-intercepted"]).toBe("GetLog");
      expect(answer?.headers["trailer-x-trailer"]).toBe("set by the handler");
      expect(JSON.parse(Buffer.from(answer?.body ?? "", "base64").toString())).toMatchObject({
        data: { id: "log_1" },
      });
      expect(seen.get("a deadline (connect-timeout-ms)")?.headers["x-deadline"]).toBe("set");
      expect(seen.get("a deadline that passes")?.status).toBe(504);
      expect(seen.get("a malformed connect-timeout-ms")?.status).toBe(400);
      expect(seen.get("an error with details")?.status).toBe(400);
      expect(seen.get("an error with metadata")?.headers["retry-after"]).toBe("7");
      // The error's own status and code, whatever its metadata names; its own header still reaches the client.
      const protocolHeaders = seen.get("an error carrying protocol headers in its metadata");
      expect(protocolHeaders?.status).toBe(400);
      expect(Buffer.from(protocolHeaders?.body ?? "", "base64").toString()).toContain("failed_precondition");
      expect(protocolHeaders?.headers["x-kept"]).toBe("kept");
      expect(seen.get("a fault")?.status).toBe(500);
      expect(seen.get("a chunked body within the limit")?.status).toBe(200);
      const tooLarge = seen.get("a chunked body that passes the limit");
      expect(tooLarge?.status).toBe(429);
      expect(Buffer.from(tooLarge?.body ?? "", "base64").toString()).toContain("resource_exhausted");
      expect(seen.get("a large answer to a client that accepts gzip")?.headers["content-encoding"]).toBe(
        "gzip",
      );
      expect(
        seen.get("a small answer to a client that accepts gzip")?.headers["content-encoding"],
      ).toBeUndefined();
      expect(seen.get("a gzip request")?.status).toBe(200);
      expect(seen.get("a gzip request with a large gzip answer")?.status).toBe(200);
      expect(seen.get("a gzip request with a large gzip answer")?.headers["content-encoding"]).toBe("gzip");
      expect(seen.get("a body over the limit")?.status).toBe(429);
      expect(seen.get("malformed JSON")?.status).toBe(400);
      expect(seen.get("a malformed binary message")?.status).toBe(400);
      expect(seen.get("a streaming content type")?.status).toBe(415);
      expect(seen.get("a GET request, refused: no method declares an idempotency level")?.status).toBe(405);
    });
  },
);
