import { once } from "node:events";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { writeUniversalResponse } from "../src/rpc/node-exchange.js";
import type { NodeRequest, NodeResponse } from "../src/rpc/node-http.js";
import { oneChunk } from "../src/rpc/one-chunk.js";

/**
 * Writing a handler's answer back to Node (node-exchange.ts), on real servers over loopback: a client that
 * leaves while the handler still runs must not leave the write waiting for ever.
 */

type Outcome = { settled: "resolved" } | { settled: "rejected"; code: Code };

/**
 * The two ways an answer is written: a unary answer's one chunk whole (`OneChunk`), and any other body
 * (a stream's) chunk by chunk as it iterates.
 */
const bodies = {
  "a unary answer's one chunk": (chunk: Uint8Array) => oneChunk(chunk),
  "a streamed body": async function* (chunk: Uint8Array) {
    yield chunk;
  },
};

/** Serves one request: waits for its client to leave, then writes an answer; resolves with how the write ended. */
function writeAfterTheClientLeft(
  listen: (handler: (req: NodeRequest, res: NodeResponse) => void) => http.Server | http2.Http2Server,
  body: (chunk: Uint8Array) => AsyncIterable<Uint8Array>,
) {
  let written!: (outcome: Outcome) => void;
  const outcome = new Promise<Outcome>((resolve) => {
    written = resolve;
  });
  const server = listen((_req, res) => {
    res.once("close", () => {
      // 64 KiB: more than a closed socket's buffer would take without waiting for a drain.
      const answer = {
        status: 200,
        header: new Headers({ "content-type": "application/proto" }),
        body: body(new Uint8Array(64 * 1024)),
      };
      writeUniversalResponse(answer, res).then(
        () => written({ settled: "resolved" }),
        (error) => written({ settled: "rejected", code: ConnectError.from(error).code }),
      );
    });
  });
  return { server, outcome };
}

describe.each(Object.entries(bodies))("writeUniversalResponse, %s", (_, body) => {
  it("rejects with aborted when the HTTP/1.1 client left before the answer began", async () => {
    const { server, outcome } = writeAfterTheClientLeft((handler) => http.createServer(handler), body);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const request = http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      request.on("error", () => {});
      setTimeout(() => request.destroy(), 50);
      expect(await outcome).toEqual({ settled: "rejected", code: Code.Aborted });
    } finally {
      server.close();
    }
  });

  it("rejects with aborted when the HTTP/2 client reset its stream before the answer began", async () => {
    const { server, outcome } = writeAfterTheClientLeft((handler) => http2.createServer(handler), body);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    session.on("error", () => {});
    try {
      const stream = session.request({ ":path": "/" });
      stream.on("error", () => {});
      setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), 50);
      expect(await outcome).toEqual({ settled: "rejected", code: Code.Aborted });
    } finally {
      session.destroy();
      server.close();
    }
  });
});
