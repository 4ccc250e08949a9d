import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { ConnectionLimits } from "../limits/quotas.js";

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

/** What a connection whose request did not arrive in time is told before it is closed, as Node tells it. */
const requestTimeoutAnswer = Buffer.from(
  "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n",
  "latin1",
);

/**
 * One cleartext port for HTTP/1.1 and HTTP/2 with prior knowledge (how grpcurl -plaintext,
 * Python's insecure_channel and Go clients speak gRPC): the first bytes of a connection tell
 * which protocol it speaks, and the connection is handed to the matching Node server.
 *
 * No connection may sit on the port for free (D27): a new connection must show its protocol within the
 * detection timeout, a request's headers and its whole body must arrive within theirs on either protocol,
 * idle keep-alive connections and HTTP/2 sessions are closed, and connections beyond the cap are refused.
 */
export function createOnePortServer(
  handler: Handler,
  limits: ConnectionLimits,
): { server: net.Server; stopReuse(): void } {
  // D27's headers and body deadlines are kept by http1Deadlines, not by Node: Node checks them from a
  // list of connections it tracks only for a server that listens itself, and this one never does (the
  // sniffer hands it its connections), and started by hand that check was seen to close a half-sent head
  // only some of the time (issue 49). Node's own keep-alive timeout is a socket timer, and serves as it is.
  const h1 = http.createServer(
    { headersTimeout: 0, requestTimeout: 0, keepAliveTimeout: limits.keepAliveTimeoutMs },
    handler,
  );
  const http1 = http1Deadlines(h1, limits);
  const linger = lingeringClose(h1, limits.lingerMs);
  const h2 = http2.createServer(
    { settings: { maxConcurrentStreams }, maxDeflateDynamicTableSize: answerHeaderTableBytes },
    handler,
  );
  const reuse = connectionReuse(h1, h2);
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
        http1.connected(socket);
        linger.connected(socket);
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
    socket.on("error", () => socket.destroy());
  });
  server.maxConnections = limits.maxConnections;
  server.once("close", () => h1.close());
  return { server, stopReuse: reuse.stop };
}

/**
 * What a stopping server owes the connections it already holds (issue 16): a listener closed by
 * `server.close()` takes no new connection, but a client's kept-alive HTTP/1.1 connection or HTTP/2 session
 * would go on carrying new requests to it until the drain's deadline cut it. Node's own `closeIdleConnections`
 * tracks only the connections of a server that listens itself, which `h1` never does (the sniffer hands them
 * over). `stop()` closes the idle HTTP/1.1 connections, answers the busy ones' requests with
 * `Connection: close` and closes them after their answer, and sends every HTTP/2 session GOAWAY, which lets
 * its open streams finish and refuses new ones.
 */
function connectionReuse(h1: http.Server, h2: http2.Http2Server) {
  let stopped = false;
  const connections = new Map<net.Socket, Http1Connection>();
  const sessions = new Set<http2.ServerHttp2Session>();
  h1.on("connection", (socket: net.Socket) => {
    connections.set(socket, new Http1Connection());
    socket.once("close", () => connections.delete(socket));
  });
  h1.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const { socket } = req;
    const connection = connections.get(socket);
    if (stopped) res.shouldKeepAlive = false;
    if (!connection) return;
    connection.unanswered += 1;
    connection.latest = res;
    res.once("close", () => {
      connection.unanswered -= 1;
      if (connection.latest === res) connection.latest = undefined;
      if (stopped && connection.unanswered === 0 && connections.has(socket)) socket.end();
    });
  });
  h2.on("session", (session: http2.ServerHttp2Session) => {
    if (stopped) session.close();
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  return {
    stop() {
      stopped = true;
      for (const [socket, { unanswered, latest }] of connections) {
        if (unanswered === 0) socket.destroy();
        else if (latest && !latest.headersSent) latest.shouldKeepAlive = false;
      }
      for (const session of sessions) session.close();
    },
  };
}

/**
 * An HTTP/1.1 connection as connectionReuse follows it: how many of its answers are not yet finished (0:
 * idle, between requests), and the latest of them, the one a stop tells `Connection: close` (Node writes a
 * pipelined connection's answers in order, so the ones before it still go out). A response is held in this
 * field, overwritten by the next and cleared when it closes, never in a collection of responses: a
 * long-lived Set that every request added to and deleted from kept each response, its request and its
 * answer alive through V8's young collections (its hash table lives in the old generation, and each rehash
 * left an obsolete copy there still pointing at the responses it held until the next full collection):
 * about 500 KB promoted per scavenge under a one-entry load, against 25 KB (bench gc-promotion, issue 13).
 */
class Http1Connection {
  unanswered = 0;
  latest: http.ServerResponse | undefined = undefined;
}

/**
 * RFC 9112 §9.6's lingering close, for an HTTP/1.1 connection the server ends after an answer given before
 * the request's body had all arrived: a refusal (D28), a body over D26's limit. Node ends such a connection by
 * closing its socket as soon as the answer is written; a client still sending its body then meets a reset,
 * which can erase the answer from its receive buffer before it was read (a 413 seen as `EPIPE` or
 * `ECONNRESET`, the more often the larger the body). Here the server closes in stages instead: it half-closes
 * after the answer, reads and drops what the client still sends until the body ends, the client closes, or
 * `lingerMs` passes, and then closes. Nothing of the rest is parsed beyond its framing, nor kept.
 *
 * Node closes a `Connection: close` answer's connection with `socket.destroySoon()` (`resOnFinish` in
 * lib/_http_server.js, Node 20 and 24); each connection's own `destroySoon` lingers when its latest request
 * is incomplete and does as Node's otherwise. Were Node to stop calling it, connections would close at once
 * as before, and hostile-input's "a refusal reaches a client still sending its body" would fail.
 */
function lingeringClose(h1: http.Server, lingerMs: number) {
  const latest = new WeakMap<net.Socket, http.IncomingMessage>();
  h1.on("request", (req: http.IncomingMessage) => latest.set(req.socket, req));
  return {
    connected(socket: net.Socket) {
      socket.destroySoon = () => {
        const req = latest.get(socket);
        if (req === undefined || req.complete) {
          net.Socket.prototype.destroySoon.call(socket);
          return;
        }
        const close = () => {
          clearTimeout(late);
          socket.destroy();
        };
        const late = setTimeout(close, lingerMs);
        socket.end();
        socket.once("close", () => clearTimeout(late));
        socket.once("end", close);
        req.once("end", close);
        req.resume();
      };
    },
  };
}

/**
 * D27 on HTTP/1.1: a request's headers within `headersTimeoutMs` and its whole body within `bodyTimeoutMs`
 * of them, else a 408 (when nothing of an answer was written yet) and the connection closed, as on HTTP/2.
 * Node's parser reads the socket itself, so the first byte of a keep-alive connection's next request is
 * not seen here: its head is awaited from the end of the previous answer, for the keep-alive timeout
 * (after which Node closes an idle connection) plus the headers timeout.
 */
function http1Deadlines(h1: http.Server, limits: ConnectionLimits) {
  const heads = new WeakMap<net.Socket, NodeJS.Timeout>();
  const close = (socket: net.Socket, answered: boolean) => {
    if (socket.destroyed) return;
    // A connection closing in stages (lingeringClose) has already said all it will.
    if (!answered && socket.writable) socket.write(requestTimeoutAnswer);
    socket.destroy();
  };
  const awaitHead = (socket: net.Socket, ms: number) => {
    clearTimeout(heads.get(socket));
    const late = setTimeout(() => close(socket, false), ms);
    late.unref();
    heads.set(socket, late);
  };
  h1.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const { socket } = req;
    clearTimeout(heads.get(socket));
    heads.delete(socket);
    // Complete once its last byte arrived, whether or not the handler has read it.
    const late = setTimeout(() => req.complete || close(socket, res.headersSent), limits.bodyTimeoutMs);
    late.unref();
    res.once("close", () => clearTimeout(late));
    res.once("finish", () => {
      clearTimeout(late);
      // A connection this answer ends (Connection: close; lingeringClose bounds it) awaits no next head.
      if (!socket.destroyed && !socket.writableEnded) {
        awaitHead(socket, limits.keepAliveTimeoutMs + limits.headersTimeoutMs);
      }
    });
  });
  return {
    /** A new connection: its first request's head is awaited from now. */
    connected(socket: net.Socket) {
      socket.once("close", () => clearTimeout(heads.get(socket)));
      awaitHead(socket, limits.headersTimeoutMs);
    },
  };
}
