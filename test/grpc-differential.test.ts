import { promisify } from "node:util";
import { gunzipSync, gzip } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { GetLogRequestSchema, ListLogsRequestSchema } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import {
  type Answered,
  call,
  differentialServersFor,
  flowlogAnswers,
  type Sent,
  type Transport,
} from "./support/unary-differential.js";

/**
 * flowlog answers unary gRPC and gRPC-Web calls with handlers of its own (src/rpc/grpc-unary.ts, issue
 * 13) in place of connect-es's streaming pipeline, written back through its own Node adapter
 * (src/rpc/node-adapter.ts). The promise: on the wire it answers what connect-es answers. Two servers
 * mount the same implementation, one by connect-es alone (`connectNodeAdapter`) and one by flowlog's RPC
 * layer, and every case below is sent to both as raw frames and compared byte for byte: status, headers,
 * body and trailers (grpc-status, grpc-message, grpc-status-details-bin and metadata), which gRPC-Web
 * carries in a last envelope of the body. gRPC over HTTP/2; gRPC-Web over HTTP/2 and over HTTP/1.1, as
 * browsers send it. Pinned connect-es (package.json): an upgrade that changes its wire fails here.
 */
const urls = differentialServersFor(["HTTP/2", "HTTP/1.1"]);

function envelope(message: Uint8Array, flags = 0, length = message.byteLength): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(flags, 0);
  header.writeUInt32BE(length, 1);
  return Buffer.concat([header, message]);
}

const getLog = "/flowlog.logs.v1.LogsService/GetLog";
const listLogs = "/flowlog.logs.v1.LogsService/ListLogs";
const getLogOf = (id: string) => toBinary(GetLogRequestSchema, create(GetLogRequestSchema, { id }));
const listOf = (limit: number) =>
  toBinary(ListLogsRequestSchema, create(ListLogsRequestSchema, { workspaceId: "ws_1", limit }));

/** A gRPC call: POST with gRPC's content type and `te: trailers`, unless the case says otherwise. */
function grpc(path: string, headers: Record<string, string>, body: Uint8Array): Sent {
  return { path, headers: { "content-type": "application/grpc", te: "trailers", ...headers }, body };
}

type Case = readonly [string, () => Promise<Sent>];

const cases: Case[] = [
  ["an answer", async () => grpc(getLog, {}, envelope(getLogOf("log_1")))],
  [
    "an answer as JSON (application/grpc+json)",
    async () =>
      grpc(
        getLog,
        { "content-type": "application/grpc+json" },
        envelope(Buffer.from(JSON.stringify({ id: "log_1" }))),
      ),
  ],
  [
    "a deadline (grpc-timeout)",
    async () => grpc(getLog, { "grpc-timeout": "5S" }, envelope(getLogOf("log_1"))),
  ],
  ["a deadline that passes", async () => grpc(getLog, { "grpc-timeout": "50m" }, envelope(getLogOf("slow")))],
  [
    "a malformed grpc-timeout",
    async () => grpc(getLog, { "grpc-timeout": "soon" }, envelope(getLogOf("log_1"))),
  ],
  ["an error with details", async () => grpc(getLog, {}, envelope(getLogOf("invalid")))],
  ["an error with metadata", async () => grpc(getLog, {}, envelope(getLogOf("throttled")))],
  [
    "an error carrying protocol headers in its metadata",
    async () => grpc(getLog, {}, envelope(getLogOf("protocol metadata"))),
  ],
  ["a fault", async () => grpc(getLog, {}, envelope(getLogOf("fault")))],
  [
    "a large answer to a client that accepts gzip",
    async () => grpc(listLogs, { "grpc-accept-encoding": "gzip" }, envelope(listOf(100))),
  ],
  [
    "a small answer to a client that accepts gzip",
    async () => grpc(listLogs, { "grpc-accept-encoding": "gzip" }, envelope(listOf(2))),
  ],
  [
    "a gzip request",
    async () =>
      grpc(getLog, { "grpc-encoding": "gzip" }, envelope(await promisify(gzip)(getLogOf("log_1")), 1)),
  ],
  [
    "a gzip request with a large gzip answer",
    async () =>
      grpc(
        listLogs,
        { "grpc-encoding": "gzip", "grpc-accept-encoding": "gzip" },
        envelope(await promisify(gzip)(listOf(100)), 1),
      ),
  ],
  [
    "a gzip request that inflates past the limit",
    async () =>
      grpc(getLog, { "grpc-encoding": "gzip" }, envelope(await promisify(gzip)(Buffer.alloc(100_000)), 1)),
  ],
  [
    "an unknown request encoding",
    async () => grpc(getLog, { "grpc-encoding": "snappy" }, envelope(getLogOf("log_1"), 1)),
  ],
  ["a compressed flag without an encoding", async () => grpc(getLog, {}, envelope(getLogOf("log_1"), 1))],
  ["a message declared over the limit", async () => grpc(getLog, {}, envelope(new Uint8Array(8), 0, 10_000))],
  ["a malformed message", async () => grpc(getLog, {}, envelope(Buffer.from([0xff, 0xff, 0xff])))],
  ["no message", async () => grpc(getLog, {}, new Uint8Array())],
  [
    "two messages",
    async () => grpc(getLog, {}, Buffer.concat([envelope(getLogOf("a")), envelope(getLogOf("b"))])),
  ],
  ["a truncated envelope", async () => grpc(getLog, {}, envelope(getLogOf("log_1")).subarray(0, 7))],
  // Flagged 0x80: trailers in gRPC-Web, which a client never sends (connect-es skips them); in gRPC a
  // message like any other.
  [
    "a trailer-flagged envelope, then the message",
    async () => grpc(getLog, {}, Buffer.concat([envelope(getLogOf("a"), 0x80), envelope(getLogOf("log_1"))])),
  ],
  [
    "the message, then a trailer-flagged envelope",
    async () => grpc(getLog, {}, Buffer.concat([envelope(getLogOf("log_1")), envelope(getLogOf("a"), 0x80)])),
  ],
  ["a trailer-flagged envelope alone", async () => grpc(getLog, {}, envelope(getLogOf("log_1"), 0x80))],
  [
    "a trailer-flagged envelope declared over the limit",
    async () => grpc(getLog, {}, envelope(new Uint8Array(8), 0x80, 10_000)),
  ],
  [
    "trailers past the compression threshold",
    async () => grpc(getLog, { "grpc-accept-encoding": "gzip" }, envelope(getLogOf("long trailer"))),
  ],
];

/** Each case sent to both servers over the transport: flowlog's exchange must be connect-es's. */
function answersAsConnect(transport: Transport) {
  return async (_name: string, build: Case[1]) => {
    const sent = await build();
    const { connectUrl, flowlogUrl } = urls(transport);
    expect(await call(transport, flowlogUrl, sent)).toEqual(await call(transport, connectUrl, sent));
  };
}

function bodyOf(answer: Answered | undefined): Buffer {
  return Buffer.from(answer?.body ?? "", "base64");
}

describe("unary gRPC answers as connect-es answers them (issue 13)", () => {
  it.each(cases)("%s", answersAsConnect("HTTP/2"));

  it("the cases cover answers, errors, deadlines and compression on the wire", async () => {
    const seen = await flowlogAnswers("HTTP/2", urls("HTTP/2").flowlogUrl, cases);
    const status = (name: string) => {
      const exchange = seen.get(name);
      return exchange?.trailers["grpc-status"] ?? exchange?.headers["grpc-status"];
    };
    expect(status("an answer")).toBe("0");
    expect(seen.get("an answer")?.headers["x-intercepted"]).toBe("GetLog");
    expect(seen.get("an answer")?.trailers["x-trailer"]).toBe("set by the handler");
    expect(seen.get("a deadline (grpc-timeout)")?.headers["x-deadline"]).toBe("set");
    expect(status("a deadline that passes")).toBe(String(Code.DeadlineExceeded));
    expect(status("a malformed grpc-timeout")).toBe(String(Code.InvalidArgument));
    expect(status("an error with details")).toBe(String(Code.InvalidArgument));
    expect(seen.get("an error with details")?.trailers["grpc-status-details-bin"]).toBeTruthy();
    expect(seen.get("an error with metadata")?.trailers["retry-after"]).toBe("7");
    // The error's own code and message, whatever its metadata names; its own header still reaches the client.
    expect(status("an error carrying protocol headers in its metadata")).toBe(
      String(Code.FailedPrecondition),
    );
    expect(seen.get("an error carrying protocol headers in its metadata")?.trailers["grpc-message"]).toBe(
      "refused",
    );
    expect(seen.get("an error carrying protocol headers in its metadata")?.trailers["x-kept"]).toBe("kept");
    expect(status("a fault")).toBe(String(Code.Internal));
    expect(seen.get("a fault")?.trailers["grpc-message"]).toBe("internal%20error");
    expect(seen.get("a large answer to a client that accepts gzip")?.headers["grpc-encoding"]).toBe("gzip");
    expect(bodyOf(seen.get("a large answer to a client that accepts gzip"))[0]).toBe(1);
    expect(bodyOf(seen.get("a small answer to a client that accepts gzip"))[0]).toBe(0);
    expect(status("a gzip request")).toBe("0");
    expect(status("a gzip request with a large gzip answer")).toBe("0");
    expect(bodyOf(seen.get("a gzip request with a large gzip answer"))[0]).toBe(1);
    expect(status("a gzip request that inflates past the limit")).toBe(String(Code.ResourceExhausted));
    expect(status("a message declared over the limit")).toBe(String(Code.ResourceExhausted));
    expect(status("an unknown request encoding")).toBe(String(Code.Unimplemented));
    expect(status("a malformed message")).toBe(String(Code.InvalidArgument));
    expect(status("no message")).toBe(String(Code.Unimplemented));
    expect(status("two messages")).toBe(String(Code.Unimplemented));
    expect(status("a truncated envelope")).toBe(String(Code.InvalidArgument));
    // gRPC has no trailers in the body: a flagged envelope is a message.
    expect(status("a trailer-flagged envelope alone")).toBe("0");
    expect(status("a trailer-flagged envelope, then the message")).toBe(String(Code.Unimplemented));
  });
});

/** The gRPC cases as gRPC-Web calls: the same requests under gRPC-Web's content types. */
const webCases: Case[] = [
  ...cases.map(
    ([name, build]): Case => [
      name.replace("application/grpc+json", "application/grpc-web+json"),
      async () => {
        const sent = await build();
        const json = sent.headers["content-type"] === "application/grpc+json";
        const contentType = `application/grpc-web+${json ? "json" : "proto"}`;
        return { ...sent, headers: { ...sent.headers, "content-type": contentType } };
      },
    ],
  ),
  [
    "grpc-web-text, which neither answers",
    async () =>
      grpc(
        getLog,
        { "content-type": "application/grpc-web-text" },
        Buffer.from(envelope(getLogOf("log_1")).toString("base64")),
      ),
  ],
];

/** gRPC-Web's trailers: the body's last envelope, flagged 0x80, as `name: value` lines. */
function webTrailers(exchange: Answered | undefined): Record<string, string> {
  const body = bodyOf(exchange);
  let offset = 0;
  while (offset + 5 <= body.length) {
    const flags = body.readUInt8(offset);
    const length = body.readUInt32BE(offset + 1);
    const data = body.subarray(offset + 5, offset + 5 + length);
    offset += 5 + length;
    if ((flags & 0x80) === 0) continue;
    const text = ((flags & 1) === 1 ? gunzipSync(data) : data).toString();
    return Object.fromEntries(
      text
        .split("\r\n")
        .filter((line) => line !== "")
        .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]),
    );
  }
  return {};
}

describe.each(["HTTP/2", "HTTP/1.1"] as const)(
  "unary gRPC-Web answers as connect-es answers them, over %s (issue 13)",
  (transport) => {
    it.each(webCases)("%s", answersAsConnect(transport));

    it("the cases cover answers, errors, deadlines and compression on the wire, the status in the body", async () => {
      const seen = await flowlogAnswers(transport, urls(transport).flowlogUrl, webCases);
      const status = (name: string) => webTrailers(seen.get(name))["grpc-status"];
      expect(seen.get("an answer")?.headers["content-type"]).toBe("application/grpc-web+proto");
      expect(seen.get("an answer")?.trailers).toEqual({});
      expect(status("an answer")).toBe("0");
      expect(webTrailers(seen.get("an answer"))["x-trailer"]).toBe("set by the handler");
      expect(seen.get("an answer")?.headers["x-intercepted"]).toBe("GetLog");
      expect(seen.get("an answer as JSON (application/grpc-web+json)")?.headers["content-type"]).toBe(
        "application/grpc-web+json",
      );
      expect(seen.get("a deadline (grpc-timeout)")?.headers["x-deadline"]).toBe("set");
      expect(status("a deadline that passes")).toBe(String(Code.DeadlineExceeded));
      expect(status("an error with details")).toBe(String(Code.InvalidArgument));
      expect(webTrailers(seen.get("an error with details"))["grpc-status-details-bin"]).toBeTruthy();
      expect(webTrailers(seen.get("an error with metadata"))["retry-after"]).toBe("7");
      const protocolHeaders = webTrailers(seen.get("an error carrying protocol headers in its metadata"));
      expect(protocolHeaders["grpc-status"]).toBe(String(Code.FailedPrecondition));
      expect(protocolHeaders["x-kept"]).toBe("kept");
      expect(status("a fault")).toBe(String(Code.Internal));
      expect(bodyOf(seen.get("a large answer to a client that accepts gzip"))[0]).toBe(1);
      expect(status("a gzip request with a large gzip answer")).toBe("0");
      expect(bodyOf(seen.get("a gzip request with a large gzip answer"))[0]).toBe(1);
      const longTrailers = bodyOf(seen.get("trailers past the compression threshold"));
      expect(longTrailers[longTrailers.readUInt32BE(1) + 5]).toBe(0x81);
      // Trailers a client sent are passed over: the message around them is the call's.
      expect(status("a trailer-flagged envelope, then the message")).toBe("0");
      expect(status("the message, then a trailer-flagged envelope")).toBe("0");
      expect(status("a trailer-flagged envelope alone")).toBe(String(Code.Unimplemented));
      expect(status("a trailer-flagged envelope declared over the limit")).toBe(
        String(Code.ResourceExhausted),
      );
      expect(webTrailers(seen.get("trailers past the compression threshold"))["x-long"]).toHaveLength(512);
      expect(status("a gzip request that inflates past the limit")).toBe(String(Code.ResourceExhausted));
      expect(status("no message")).toBe(String(Code.Unimplemented));
      expect(status("a truncated envelope")).toBe(String(Code.InvalidArgument));
      expect(seen.get("grpc-web-text, which neither answers")?.status).toBe(415);
    });
  },
);
