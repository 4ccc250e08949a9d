import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach } from "vitest";

export interface ReceivedRequest {
  method: string;
  /** Path and query exactly as they arrived on the wire. */
  target: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type ReceiverHandler = (
  request: ReceivedRequest,
  response: ServerResponse,
  index: number,
) => void | Promise<void>;

export interface HttpReceiver {
  /** http://127.0.0.1:port, no trailing slash. */
  origin: string;
  port: number;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that records each request with its body before handing it on. */
export async function startReceiver(handler: ReceiverHandler): Promise<HttpReceiver> {
  const received: ReceivedRequest[] = [];
  const server = createServer(async (incoming, response) => {
    const request = await readRequest(incoming);
    received.push(request);
    await handler(request, response, received.length - 1);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    received,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

export interface HeldReceiver extends HttpReceiver {
  /** Requests answered by nobody yet. */
  inFlight(): number;
  /** The most requests it held at once. */
  mostAtOnce(): number;
  /** Answers every held request with 200, and every later one at once. */
  release(): void;
}

/** A slow upstream: it holds every request until released, counting how many it holds at once. */
export async function startHeldReceiver(): Promise<HeldReceiver> {
  const held: ServerResponse[] = [];
  let released = false;
  let inFlight = 0;
  let mostAtOnce = 0;
  const receiver = await startReceiver((_, response) => {
    inFlight++;
    mostAtOnce = Math.max(mostAtOnce, inFlight);
    response.on("finish", () => inFlight--);
    if (released) sendJson(response, 200, { ok: true });
    else held.push(response);
  });
  return {
    ...receiver,
    inFlight: () => inFlight,
    mostAtOnce: () => mostAtOnce,
    release: () => {
      released = true;
      for (const response of held.splice(0)) sendJson(response, 200, { ok: true });
    },
  };
}

async function readRequest(incoming: IncomingMessage): Promise<ReceivedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return {
    method: incoming.method ?? "",
    target: incoming.url ?? "",
    headers: incoming.headers,
    body: Buffer.concat(chunks).toString("utf8"),
  };
}

/** A port that was free a moment ago and has nothing listening on it now: connecting is refused. */
export async function closedPort(): Promise<number> {
  const receiver = await startReceiver(() => {});
  await receiver.close();
  return receiver.port;
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

/** A receiver factory for a test file: every receiver it starts is closed after each test. */
export function receiversClosedAfterEach(): (handler: ReceiverHandler) => Promise<HttpReceiver> {
  return receiversClosedBy(afterEach);
}

/** A receiver factory for a test file: every receiver it starts is closed once the file's tests are done. */
export function receiversClosedAfterAll(): (handler: ReceiverHandler) => Promise<HttpReceiver> {
  return receiversClosedBy(afterAll);
}

function receiversClosedBy(hook: (close: () => Promise<void>) => void) {
  const open: HttpReceiver[] = [];
  hook(async () => {
    await Promise.all(open.splice(0).map((receiver) => receiver.close()));
  });
  return async (handler: ReceiverHandler): Promise<HttpReceiver> => {
    const started = await startReceiver(handler);
    open.push(started);
    return started;
  };
}
