import http from "node:http";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetLogRequestSchema } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { startDifferentialServers } from "./support/unary-differential.js";

/**
 * flowlog's router (src/rpc/router.ts) answers the Connect protocol with connect-es's own handler
 * (issue 50). The promise: on the wire it answers what connect-es answers. Two servers mount the same
 * implementation, one through Connect's router and one through flowlog's, and every case below is sent
 * to both as a raw HTTP/1.1 request and compared byte for byte: status, headers and body.
 */
let connectUrl: string;
let flowlogUrl: string;
let close: (() => void) | undefined;

beforeAll(async () => {
  ({ connectUrl, flowlogUrl, close } = await startDifferentialServers((listener) =>
    http.createServer(listener),
  ));
});
afterAll(() => close?.());

interface Answered {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}
type Exchange = Answered | { failed: string };

interface Sent {
  path: string;
  method?: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** The body sent in these pieces, chunked, with no content-length. */
  pieces?: Uint8Array[];
}

/**
 * One request as given; what came back, less the date and the connection's own headers, or how the
 * exchange failed (a server that stops reading a body too large may end the connection instead).
 */
function call(url: string, { path, method = "POST", headers, body, pieces }: Sent): Promise<Exchange> {
  return new Promise((resolve) => {
    const reject = (error: NodeJS.ErrnoException) => resolve({ failed: error.code ?? error.message });
    const request = http.request(`${url}${path}`, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const { date: _date, connection: _connection, "keep-alive": _keepAlive, ...rest } = response.headers;
        resolve({
          status: response.statusCode ?? 0,
          headers: rest,
          body: Buffer.concat(chunks).toString("base64"),
        });
      });
      response.on("error", reject);
    });
    request.on("error", reject);
    for (const piece of pieces ?? []) request.write(piece);
    request.end(body);
  });
}

const getLog = "/flowlog.logs.v1.LogsService/GetLog";
const listLogs = "/flowlog.logs.v1.LogsService/ListLogs";
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const jsonHeaders = { "content-type": "application/json" };
const protoHeaders = { "content-type": "application/proto" };
const getLogOf = (id: string) => toBinary(GetLogRequestSchema, create(GetLogRequestSchema, { id }));

const cases: [string, () => Promise<Sent>][] = [
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
    "a GET request (Connect's own handler)",
    async () => ({
      path: `${getLog}?encoding=json&message=${encodeURIComponent(JSON.stringify({ id: "log_1" }))}`,
      method: "GET",
      headers: {},
    }),
  ],
];

describe("unary Connect answers as connect-es answers them (issue 13)", () => {
  it.each(cases)("%s", async (_name, build) => {
    const sent = await build();
    const fromConnect = await call(connectUrl, sent);
    const fromFlowlog = await call(flowlogUrl, sent);
    expect(fromFlowlog).toEqual(fromConnect);
  });

  it("the cases cover answers, errors and compression on the wire", async () => {
    const exchanges = new Map<string, Exchange>();
    for (const [name, build] of cases) exchanges.set(name, await call(flowlogUrl, await build()));
    const seen = new Map([...exchanges].filter((entry): entry is [string, Answered] => "status" in entry[1]));
    const answer = seen.get("an answer as JSON");
    expect(answer?.status).toBe(200);
    expect(answer?.headers["x-intercepted"]).toBe("GetLog");
    expect(answer?.headers["trailer-x-trailer"]).toBe("set by the handler");
    expect(JSON.parse(Buffer.from(answer?.body ?? "", "base64").toString())).toMatchObject({
      data: { id: "log_1" },
    });
    expect(seen.get("a deadline (connect-timeout-ms)")?.headers["x-deadline"]).toBe("set");
    expect(seen.get("a deadline that passes")?.status).toBe(504);
    expect(seen.get("an error with details")?.status).toBe(400);
    expect(seen.get("an error with metadata")?.headers["retry-after"]).toBe("7");
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
    expect(seen.get("a body over the limit")?.status).toBe(429);
    expect(seen.get("malformed JSON")?.status).toBe(400);
    expect(seen.get("a malformed binary message")?.status).toBe(400);
    expect(seen.get("a streaming content type")?.status).toBe(415);
  });
});
