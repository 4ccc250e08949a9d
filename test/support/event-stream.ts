import http from "node:http";

/** One Server-Sent Event as a client's parser sees it; a heartbeat is `comment` with its id. */
export interface ServerSentEvent {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** A GET answered as Server-Sent Events, read over a real HTTP/1.1 socket as a browser's EventSource reads it. */
export interface EventStreamClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The answer's body when it was no event stream (a refusal's problem). */
  body: string;
  /** The next event, waiting up to `timeoutMs`. */
  next(timeoutMs?: number): Promise<ServerSentEvent>;
  /** Events received and not yet taken by next(). */
  readonly received: ServerSentEvent[];
  /** Stops reading from the socket (a slow client), or reads again. */
  pause(): void;
  resume(): void;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export function openEventStream(url: string, headers: Record<string, string>): Promise<EventStreamClient> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { accept: "text/event-stream", ...headers } }, (response) => {
      const received: ServerSentEvent[] = [];
      const waiting: (() => void)[] = [];
      let buffer = "";
      let body = "";
      const isStream = String(response.headers["content-type"]).startsWith("text/event-stream");
      response.setEncoding("utf8");
      const ended = new Promise<void>((done) => {
        response.on("end", done);
        response.on("close", done);
        response.on("error", done);
      });
      response.on("data", (chunk: string) => {
        if (!isStream) {
          body += chunk;
          return;
        }
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          received.push(parseEvent(buffer.slice(0, end)));
          buffer = buffer.slice(end + 2);
        }
        for (const wake of waiting.splice(0)) wake();
      });
      const client: EventStreamClient = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        get body() {
          return body;
        },
        received,
        async next(timeoutMs = 10_000) {
          const deadline = Date.now() + timeoutMs;
          while (received.length === 0) {
            if (Date.now() > deadline) throw new Error(`no event within ${timeoutMs} ms`);
            await Promise.race([
              new Promise<void>((wake) => waiting.push(wake)),
              ended.then(() => {
                if (received.length === 0) throw new Error("the stream ended");
              }),
              new Promise((wake) => setTimeout(wake, 50)),
            ]);
          }
          return received.shift() as ServerSentEvent;
        },
        pause: () => response.pause(),
        resume: () => response.resume(),
        ended,
        close: () => request.destroy(),
      };
      if (isStream) resolve(client);
      else response.on("end", () => resolve(client));
    });
    request.on("error", reject);
  });
}

function parseEvent(text: string): ServerSentEvent {
  const event: ServerSentEvent = {};
  for (const line of text.split("\n")) {
    if (line.startsWith(":")) event.comment = line.slice(1).trim();
    else if (line.startsWith("id: ")) event.id = line.slice(4);
    else if (line.startsWith("event: ")) event.event = line.slice(7);
    else if (line.startsWith("data: ")) event.data = line.slice(6);
  }
  return event;
}
