import { setTimeout as sleep } from "node:timers/promises";
import type { Problem } from "../../errors/problem.js";
import { type ApiConnection, ApiProblem, request } from "./api.js";
import type { EntryJson } from "./entry-json.js";
import { serverSentEvents } from "./server-sent-events.js";

export interface TailFollower {
  connection: ApiConnection;
  /** The list's filters, details and include flags (D44). */
  query: URLSearchParams;
  onEntry(entry: EntryJson): void;
  /** What a person following should know: the stream opened, ended, resumed. */
  notice(text: string): void;
  /** Ctrl-C: the follower stops and returns. */
  signal: AbortSignal;
}

/** The first wait before resuming, doubled after each failed attempt up to the last. */
const firstBackoffMs = 500;
const maxBackoffMs = 8_000;

/**
 * Follows GET /api/v1/logs:tail (D44) until `signal` aborts, missing nothing: each event's id is the
 * stream's resume token, so when the server ends the stream (an `error` event: it is stopping, or this
 * follower fell behind) or the connection drops, the follower waits a little and opens the stream again
 * with the last id as Last-Event-ID, continuing after the last entry it printed (a reopening refused
 * with Retry-After waits that long). A refusal of the first opening (a bad key, a workspace not the key's,
 * a bad filter) or of a later one that waiting cannot mend (a 4xx other than 429) is thrown as an
 * ApiProblem; a server unreachable at the start, as Unreachable.
 */
export async function followTail(follower: TailFollower): Promise<void> {
  const { connection, query, signal } = follower;
  let lastEventId: string | undefined;
  let followed = false;
  let backoffMs = firstBackoffMs;
  while (!signal.aborted) {
    let ended: string;
    let retryAfterMs = 0;
    try {
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
      const response = await request(connection, "/api/v1/logs:tail", query, headers, signal);
      if (!response.ok || !response.body) {
        const problem = await ApiProblem.of(response);
        if (!followed || (problem.status < 500 && problem.status !== 429)) throw problem;
        ended = `refused: ${problem.message}`;
        retryAfterMs = problem.retryAfterMs ?? 0;
      } else {
        let opened = false;
        ended = "the server closed the stream";
        for await (const event of serverSentEvents(response.body)) {
          if (event.id !== undefined) lastEventId = event.id;
          if (event.event === "error") {
            const problem = JSON.parse(event.data ?? "{}") as Partial<Problem>;
            ended = `the server ended the stream: ${problem.status} ${problem.code}: ${problem.detail}`;
            break;
          }
          if (!opened) {
            // The first message, a heartbeat, says the stream stands at its starting point.
            follower.notice(followed ? "resumed" : `following ${query.get("workspaceId")}; Ctrl-C to stop`);
            opened = followed = true;
            backoffMs = firstBackoffMs;
          }
          if (event.data !== undefined)
            follower.onEntry((JSON.parse(event.data) as { entry: EntryJson }).entry);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiProblem || !followed) throw error;
      ended = `the connection dropped (${(error as Error).message})`;
    }
    const waitMs = Math.max(backoffMs, retryAfterMs);
    follower.notice(`${ended}; resuming in ${waitMs / 1_000} s`);
    await sleep(waitMs, undefined, { signal }).catch(() => undefined);
    backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
  }
}
