import http2 from "node:http2";
import { promisify } from "node:util";
import { gunzipSync, gzip } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetLogRequestSchema, ListLogsRequestSchema } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { startDifferentialServers } from "./support/unary-differential.js";

/**
 * flowlog answers unary gRPC and gRPC-Web calls with handlers of its own (src/rpc/grpc-unary.ts, issue
 * 13) in place of connect-es's streaming pipeline. The promise: on the wire it answers what connect-es
 * answers. Two servers mount the same implementation, one through Connect's router and one through
 * flowlog's, and every case below is sent to both as raw HTTP/2 frames and compared byte for byte:
 * status, headers, body and trailers (grpc-status, grpc-message, grpc-status-details-bin and metadata),
 * which gRPC-Web carries in a last envelope of the body.
 */
let connectUrl: string;
let flowlogUrl: string;
let close: (() => void) | undefined;

beforeAll(async () => {
  ({ connectUrl, flowlogUrl, close } = await startDifferentialServers((listener) =>
    http2.createServer(listener),
  ));
});
afterAll(() => close?.());

interface Exchange {
  status: number;
  headers: Record<string, unknown>;
  body: string;
  trailers: Record<string, unknown>;
}

/** One call with the frames as given; what came back, less the date. */
function call(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: Uint8Array,
): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    const exchange: Exchange = { status: 0, headers: {}, body: "", trailers: {} };
    const chunks: Buffer[] = [];
    stream.on("response", (received) => {
      const { date: _date, ...rest } = received;
      exchange.status = Number(received[":status"]);
      exchange.headers = rest;
    });
    stream.on("trailers", (received) => {
      exchange.trailers = { ...received };
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("close", () => {
      session.close();
      exchange.body = Buffer.concat(chunks).toString("base64");
      resolve(exchange);
    });
    stream.on("error", reject);
    stream.end(body);
  });
}

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

const cases: [string, () => Promise<[string, Record<string, string>, Uint8Array]>][] = [
  ["an answer", async () => [getLog, {}, envelope(getLogOf("log_1"))]],
  [
    "an answer as JSON (application/grpc+json)",
    async () => [
      getLog,
      { "content-type": "application/grpc+json" },
      envelope(Buffer.from(JSON.stringify({ id: "log_1" }))),
    ],
  ],
  ["a deadline (grpc-timeout)", async () => [getLog, { "grpc-timeout": "5S" }, envelope(getLogOf("log_1"))]],
  ["a malformed grpc-timeout", async () => [getLog, { "grpc-timeout": "soon" }, envelope(getLogOf("log_1"))]],
  ["an error with details", async () => [getLog, {}, envelope(getLogOf("invalid"))]],
  ["an error with metadata", async () => [getLog, {}, envelope(getLogOf("throttled"))]],
  ["a fault", async () => [getLog, {}, envelope(getLogOf("fault"))]],
  [
    "a large answer to a client that accepts gzip",
    async () => [listLogs, { "grpc-accept-encoding": "gzip" }, envelope(listOf(100))],
  ],
  [
    "a small answer to a client that accepts gzip",
    async () => [listLogs, { "grpc-accept-encoding": "gzip" }, envelope(listOf(2))],
  ],
  [
    "a gzip request",
    async () => [getLog, { "grpc-encoding": "gzip" }, envelope(await promisify(gzip)(getLogOf("log_1")), 1)],
  ],
  [
    "a gzip request that inflates past the limit",
    async () => [
      getLog,
      { "grpc-encoding": "gzip" },
      envelope(await promisify(gzip)(Buffer.alloc(100_000)), 1),
    ],
  ],
  [
    "an unknown request encoding",
    async () => [getLog, { "grpc-encoding": "snappy" }, envelope(getLogOf("log_1"), 1)],
  ],
  ["a compressed flag without an encoding", async () => [getLog, {}, envelope(getLogOf("log_1"), 1)]],
  ["a message declared over the limit", async () => [getLog, {}, envelope(new Uint8Array(8), 0, 10_000)]],
  ["a malformed message", async () => [getLog, {}, envelope(Buffer.from([0xff, 0xff, 0xff]))]],
  ["no message", async () => [getLog, {}, new Uint8Array()]],
  [
    "two messages",
    async () => [getLog, {}, Buffer.concat([envelope(getLogOf("a")), envelope(getLogOf("b"))])],
  ],
  ["a truncated envelope", async () => [getLog, {}, envelope(getLogOf("log_1")).subarray(0, 7)]],
  // Flagged 0x80: trailers in gRPC-Web, which a client never sends (connect-es skips them); in gRPC a
  // message like any other.
  [
    "a trailer-flagged envelope, then the message",
    async () => [getLog, {}, Buffer.concat([envelope(getLogOf("a"), 0x80), envelope(getLogOf("log_1"))])],
  ],
  [
    "the message, then a trailer-flagged envelope",
    async () => [getLog, {}, Buffer.concat([envelope(getLogOf("log_1")), envelope(getLogOf("a"), 0x80)])],
  ],
  ["a trailer-flagged envelope alone", async () => [getLog, {}, envelope(getLogOf("log_1"), 0x80)]],
  [
    "a trailer-flagged envelope declared over the limit",
    async () => [getLog, {}, envelope(new Uint8Array(8), 0x80, 10_000)],
  ],
  [
    "trailers past the compression threshold",
    async () => [getLog, { "grpc-accept-encoding": "gzip" }, envelope(getLogOf("long trailer"))],
  ],
];

/** What flowlog answered to each case, by its name. */
async function flowlogExchanges(list: typeof cases): Promise<Map<string, Exchange>> {
  const seen = new Map<string, Exchange>();
  for (const [name, build] of list) {
    const [path, headers, body] = await build();
    seen.set(name, await call(flowlogUrl, path, headers, body));
  }
  return seen;
}

/** One case sent to both servers: flowlog's exchange must be connect-es's, byte for byte. */
async function answersAsConnect(_name: string, build: (typeof cases)[number][1]): Promise<void> {
  const [path, headers, body] = await build();
  expect(await call(flowlogUrl, path, headers, body)).toEqual(await call(connectUrl, path, headers, body));
}

describe("unary gRPC answers as connect-es answers them (issue 13)", () => {
  it.each(cases)("%s", answersAsConnect);

  it("the cases cover answers, errors and compression on the wire", async () => {
    const seen = await flowlogExchanges(cases);
    const status = (name: string) => {
      const exchange = seen.get(name);
      return exchange?.trailers["grpc-status"] ?? exchange?.headers["grpc-status"];
    };
    expect(status("an answer")).toBe("0");
    expect(seen.get("an answer")?.headers["x-intercepted"]).toBe("GetLog");
    expect(seen.get("an answer")?.trailers["x-trailer"]).toBe("set by the handler");
    expect(seen.get("a deadline (grpc-timeout)")?.headers["x-deadline"]).toBe("set");
    expect(status("an error with details")).toBe(String(Code.InvalidArgument));
    expect(seen.get("an error with details")?.trailers["grpc-status-details-bin"]).toBeTruthy();
    expect(seen.get("an error with metadata")?.trailers["retry-after"]).toBe("7");
    expect(status("a fault")).toBe(String(Code.Internal));
    expect(seen.get("a fault")?.trailers["grpc-message"]).toBe("internal%20error");
    expect(seen.get("a large answer to a client that accepts gzip")?.headers["grpc-encoding"]).toBe("gzip");
    expect(
      Buffer.from(seen.get("a large answer to a client that accepts gzip")?.body ?? "", "base64")[0],
    ).toBe(1);
    expect(
      Buffer.from(seen.get("a small answer to a client that accepts gzip")?.body ?? "", "base64")[0],
    ).toBe(0);
    expect(status("a gzip request")).toBe("0");
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
const webCases: typeof cases = [
  ...cases.map(([name, build]): (typeof cases)[number] => [
    name.replace("application/grpc+json", "application/grpc-web+json"),
    async () => {
      const [path, headers, body] = await build();
      const json = headers["content-type"] === "application/grpc+json";
      return [path, { ...headers, "content-type": `application/grpc-web+${json ? "json" : "proto"}` }, body];
    },
  ]),
  [
    "grpc-web-text, which neither answers",
    async () => [
      getLog,
      { "content-type": "application/grpc-web-text" },
      Buffer.from(envelope(getLogOf("log_1")).toString("base64")),
    ],
  ],
];

/** gRPC-Web's trailers: the body's last envelope, flagged 0x80, as `name: value` lines. */
function webTrailers(exchange: Exchange | undefined): Record<string, string> {
  const body = Buffer.from(exchange?.body ?? "", "base64");
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

describe("unary gRPC-Web answers as connect-es answers them (issue 13)", () => {
  it.each(webCases)("%s", answersAsConnect);

  it("the cases cover answers, errors and compression on the wire, the status in the body", async () => {
    const seen = await flowlogExchanges(webCases);
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
    expect(status("an error with details")).toBe(String(Code.InvalidArgument));
    expect(webTrailers(seen.get("an error with details"))["grpc-status-details-bin"]).toBeTruthy();
    expect(webTrailers(seen.get("an error with metadata"))["retry-after"]).toBe("7");
    expect(status("a fault")).toBe(String(Code.Internal));
    expect(
      Buffer.from(seen.get("a large answer to a client that accepts gzip")?.body ?? "", "base64")[0],
    ).toBe(1);
    const longTrailers = Buffer.from(
      seen.get("trailers past the compression threshold")?.body ?? "",
      "base64",
    );
    expect(longTrailers[longTrailers.readUInt32BE(1) + 5]).toBe(0x81);
    // Trailers a client sent are passed over: the message around them is the call's.
    expect(status("a trailer-flagged envelope, then the message")).toBe("0");
    expect(status("the message, then a trailer-flagged envelope")).toBe("0");
    expect(status("a trailer-flagged envelope alone")).toBe(String(Code.Unimplemented));
    expect(status("a trailer-flagged envelope declared over the limit")).toBe(String(Code.ResourceExhausted));
    expect(webTrailers(seen.get("trailers past the compression threshold"))["x-long"]).toHaveLength(512);
    expect(status("a gzip request that inflates past the limit")).toBe(String(Code.ResourceExhausted));
    expect(status("no message")).toBe(String(Code.Unimplemented));
    expect(status("a truncated envelope")).toBe(String(Code.InvalidArgument));
    expect(seen.get("grpc-web-text, which neither answers")?.status).toBe(415);
  });
});
