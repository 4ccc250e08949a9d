import type { TailLogsRequest } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { invalidArgument } from "../../errors/api-errors.js";
import type { LogFilter } from "../../store/log-list-sql.js";
import type { TailPosition } from "../../store/log-tail-sql.js";
import { listFilterOf } from "./entry-filter.js";
import { decodeResumeToken, filterBinding } from "./tail-token.js";

export interface TailLogsQuery {
  filter: LogFilter;
  details: "basic" | "full";
  withTraceSpans: boolean;
  withFinalOutput: boolean;
  /** What the stream's resume tokens are bound to (tail-token.ts). */
  binding: string;
  /** Where a resumed stream continues; a new one starts at the entries written from now on. */
  resumeFrom?: TailPosition;
}

/**
 * TailLogs' request as the tail follows it (D44): ListLogs' filters, details and include flags, checked
 * as the list checks them (entry-filter.ts), and a resume token (the field, or SSE's Last-Event-ID,
 * `lastEventId`) issued for the same workspace and filters. Violations are reported together.
 */
export function parseTailLogsRequest(
  request: TailLogsRequest,
  maxListValues: number,
  lastEventId: string | null,
): TailLogsQuery {
  const { filter, violations } = listFilterOf(request, maxListValues);
  const fail = (field: string, message: string) => violations.push({ field, message });
  const binding = filterBinding(filter);
  const [field, token] =
    request.resumeToken !== undefined ? ["resumeToken", request.resumeToken] : ["Last-Event-ID", lastEventId];
  let resumeFrom: TailPosition | undefined;
  if (token !== null && token !== "") {
    const decoded = decodeResumeToken(token);
    if (!decoded.ok) fail(field, `${field} is not a resume token this API returned`);
    else if (decoded.binding !== binding)
      fail(field, `${field} was issued for another workspace or other filters than this request's`);
    else resumeFrom = decoded.position;
  }
  if (violations.length > 0) throw invalidArgument(violations);
  return {
    filter,
    details: (request.details ?? "basic") as TailLogsQuery["details"],
    withTraceSpans: request.includeTraceSpans ?? false,
    withFinalOutput: request.includeFinalOutput ?? false,
    binding,
    resumeFrom,
  };
}
