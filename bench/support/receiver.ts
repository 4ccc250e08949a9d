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

/** The tokens each answer of `startModelProvider` reports using. */
export const modelAnswerTokens = { prompt: 400, completion: 120 };

/**
 * A language-model provider on loopback speaking OpenAI's chat-completions protocol, the agent block's
 * wire (D13), as the tests stand one in: each answer after `latencyMs`, reporting the usage a real provider
 * would, so an entry's cost is priced (gpt-4o-mini's dated model, which the price table knows).
 */
export function startModelProvider(latencyMs: number): Promise<Receiver> {
  return startReceiver((request, body, _arrivedAt, response) => {
    const { messages } = JSON.parse(body || "{}") as { messages?: { content: string }[] };
    setTimeout(() => {
      if (request.url !== "/v1/chat/completions") {
        response.writeHead(404, { "content-type": "application/json" });
        response.end('{"error":{"message":"no such path"}}');
        return;
      }
      const { prompt, completion } = modelAnswerTokens;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "chatcmpl-bench",
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: "gpt-4o-mini-2024-07-18",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: `noted: ${messages?.at(-1)?.content.slice(0, 80)}` },
              finish_reason: "stop",
            },
          ],
          usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
        }),
      );
    }, latencyMs);
  });
}
