import type { ConnectError } from "@connectrpc/connect";
import { problemFromError } from "../errors/problem.js";
import { toPublicError } from "../errors/public-error.js";
import type { JsonStream } from "../rpc/json-stream.js";
import type { NodeResponse } from "../rpc/node-http.js";
import { writePaced } from "./paced-write.js";
import { openStream } from "./stream-opening.js";

/**
 * A server-streaming RPC answered as Server-Sent Events (D44), the way a browser's EventSource reads
 * it. Each message is an event: its JSON as the data, its `resumeToken` as the event's id (which the
 * client sends back as Last-Event-ID). A message with nothing but its token (a heartbeat) is a comment
 * line and the id alone, which moves the client's last event id without an event. The first message
 * is awaited before anything is written, so a stream refused at its opening is answered as any REST
 * refusal (a problem with its status); an error after that is an `error` event holding the problem,
 * and the stream ends. Writes wait for the socket to drain (paced-write.ts).
 */
export async function answerEventStream(
  res: NodeResponse,
  stream: JsonStream,
  writeProblem: (error: ConnectError) => void,
  copyHeaders: (header: Headers) => void,
): Promise<void> {
  const opened = await openStream(stream, writeProblem, copyHeaders);
  if (!opened) return;
  const { messages, first } = opened;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    // A proxy that buffers answers (nginx) would hold the events back.
    "x-accel-buffering": "no",
  });
  const closed = new Promise<void>((resolve) => res.once("close", resolve));
  try {
    for (let next = first; !next.done; next = await messages.next()) {
      await writePaced(res, eventOf(stream.toJson(next.value)), closed);
      if (res.destroyed) break;
    }
  } catch (error) {
    const problem = problemFromError(toPublicError(error, "event stream"));
    if (!res.destroyed) await writePaced(res, `event: error\ndata: ${JSON.stringify(problem)}\n\n`, closed);
  } finally {
    await messages.return?.();
  }
  if (!res.destroyed) res.end();
}

/** One message as an event; JSON text holds no line break, so it is one data line. */
function eventOf(json: Uint8Array): string {
  const text = Buffer.from(json).toString("utf8");
  const message = JSON.parse(text) as { resumeToken?: string; entry?: unknown };
  const id = message.resumeToken === undefined ? "" : `id: ${message.resumeToken}\n`;
  if (message.entry == null) return `: heartbeat\n${id}\n`;
  return `${id}data: ${text}\n\n`;
}
