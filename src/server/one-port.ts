import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { ConnectionLimits } from "../config/quotas.js";

type Handler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

/** The client connection preface of HTTP/2 (RFC 9113 §3.4). */
const h2Preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** Streams of one HTTP/2 connection open at once; Node's default is unlimited. */
const maxConcurrentStreams = 100;

/**
 * The HPACK dynamic table this server compresses its answers' headers with, per HTTP/2 connection: none.
 * Every answer carries X-RateLimit-Remaining and X-RateLimit-Reset (D28), whose values change with every
 * request, so with Node's default 4 KiB table each answer added both anew. nghttp2 chains a table's entries
 * by name and walks the whole chain for every header it writes and every entry it evicts, so each answer
 * walked some thirty stale copies of each: 11 to 19 µs of CPU per gRPC answer under load, about 2 % of
 * its server time (`perf`, bench/README.md). Written without the table, an answer's headers take about
 * 110 bytes more on the wire (164 bytes of headers and framing per one-entry gRPC answer against 55).
 */
const answerHeaderTableBytes = 0;

/** The long-lived reflection stream of gRPC tools is exempt from the body deadline of unary calls. */
const streamingPaths = /^\/grpc\.reflection\./;

/**
 * One cleartext port for HTTP/1.1 and HTTP/2 with prior knowledge (how grpcurl -plaintext,
 * Python's insecure_channel and Go clients speak gRPC): the first bytes of a connection tell
 * which protocol it speaks, and the connection is handed to the matching Node server.
 *
 * No connection may sit on the port for free (D27): a new connection must show its protocol within the
 * detection timeout, a request's headers and its whole body must arrive within theirs on either protocol,
 * idle keep-alive connections and HTTP/2 sessions are closed, and connections beyond the cap are refused.
 */
export function createOnePortServer(handler: Handler, limits: ConnectionLimits): net.Server {
  const h1 = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      // Node measures requestTimeout from the request's first byte, so it can be no shorter than the headers'.
      requestTimeout: Math.max(limits.bodyTimeoutMs, limits.headersTimeoutMs),
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    },
    handler,
  );
  // Node checks the headers and request timeouts from a timer that starts when its server listens; this one
  // is handed its connections by the sniffer instead, so the timer is started by hand.
  h1.emit("listening");
  const h2 = http2.createServer(
    { settings: { maxConcurrentStreams }, maxDeflateDynamicTableSize: answerHeaderTableBytes },
    handler,
  );
  h2.on("session", (session) => session.setTimeout(limits.http2IdleTimeoutMs, () => session.destroy()));
  h2.on("stream", (stream, headers) => {
    if (streamingPaths.test(String(headers[":path"]))) return;
    const late = setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), limits.bodyTimeoutMs);
    late.unref();
    stream.once("end", () => clearTimeout(late));
    stream.once("close", () => clearTimeout(late));
  });

  const server = net.createServer((socket) => {
    const undetected = () => socket.destroy();
    socket.setTimeout(limits.protocolDetectionTimeoutMs);
    socket.once("timeout", undetected);
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const length = Math.min(received.length, h2Preface.length);
      const couldBeH2 = received.subarray(0, length).equals(h2Preface.subarray(0, length));
      if (couldBeH2 && received.length < h2Preface.length) return;
      socket.off("data", onData);
      socket.off("timeout", undetected);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(received);
      if (couldBeH2) {
        // The HTTP/2 session reads what is already buffered on its next tick; resuming here
        // would flow those bytes away before it looks.
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
    socket.on("error", () => socket.destroy());
  });
  server.maxConnections = limits.maxConnections;
  server.once("close", () => h1.close());
  return server;
}
