import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";

/** One event of a text/event-stream body; a heartbeat (D44: a comment and an id) is one with only an id. */
export interface ServerSentEvent {
  id?: string;
  event?: string;
  data?: string;
}

/**
 * The events of a text/event-stream body, parsed as the HTML standard's EventSource does (lines ended by
 * CR, LF or CRLF, comments skipped, data lines joined by LF); `retry` is not used, the follower paces itself.
 */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const lines = createInterface({
    input: Readable.fromWeb(body as NodeReadableStream<Uint8Array>),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let event: ServerSentEvent = {};
  for await (const line of lines) {
    if (line === "") {
      if (Object.keys(event).length > 0) yield event;
      event = {};
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") event.id = value;
    else if (field === "event") event.event = value;
    else if (field === "data") event.data = event.data === undefined ? value : `${event.data}\n${value}`;
  }
}
