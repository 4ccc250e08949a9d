import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Receiver {
  /** http://127.0.0.1:port */
  url: string;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server standing in for the outside world: the REST API an HTTP block calls, or a
 * webhook endpoint. `handle` sees each request with its whole body and its arrival time.
 */
export function startReceiver(
  handle: (request: IncomingMessage, body: string, arrivedAt: number, response: ServerResponse) => void,
): Promise<Receiver> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => handle(request, Buffer.concat(chunks).toString(), Date.now(), response));
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** The REST API the bench workflows call: a small JSON document, at once. */
export function startItemApi(): Promise<Receiver> {
  return startReceiver((_request, _body, _arrivedAt, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end('{"id":1,"title":"bench item","done":false}');
  });
}

/**
 * An OTLP/HTTP trace receiver that takes every export and keeps nothing (D50): what a traced flowlog
 * pays to make and send its spans, without a backend's own cost on these shared cores.
 */
export function startOtlpSink(): Promise<Receiver> {
  return startReceiver((_request, _body, _arrivedAt, response) => {
    response.writeHead(200, { "content-type": "application/x-protobuf" });
    response.end();
  });
}
