import http from "node:http";
import http2 from "node:http2";
import net from "node:net";

type Handler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

/** The client connection preface of HTTP/2 (RFC 9113 §3.4). */
const h2Preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * One cleartext port for HTTP/1.1 and HTTP/2 with prior knowledge (how grpcurl -plaintext,
 * Python's insecure_channel and Go clients speak gRPC): the first bytes of a connection tell
 * which protocol it speaks, and the connection is handed to the matching Node server.
 */
export function createOnePortServer(handler: Handler): net.Server {
  const h1 = http.createServer(handler);
  const h2 = http2.createServer({}, handler);
  return net.createServer((socket) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const length = Math.min(received.length, h2Preface.length);
      const couldBeH2 = received.subarray(0, length).equals(h2Preface.subarray(0, length));
      if (couldBeH2 && received.length < h2Preface.length) return;
      socket.off("data", onData);
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
}
