import { type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Limits, LimitsSchema } from "../../gen/flowlog/logs/v1/limits_pb.js";
import { completionEventType } from "../domain/event-types.js";
import type { CostRecord, Level, LogEntryRecord, Trigger } from "../store/records.js";
import { isoFromMs } from "../util/time.js";

/** The subscription's include flags (spec "Notification configuration"). */
export interface EventIncludes {
  finalOutput: boolean;
  traceSpans: boolean;
  rateLimits: boolean;
  usage: boolean;
}

/** The spec's "Event payload" table, field for field and in its order (D7: names exactly the spec's). */
export interface CompletionEvent {
  id: string;
  type: typeof completionEventType;
  /** Unix milliseconds, an integer. */
  timestamp: number;
  data: {
    workflowId: string;
    executionId: string;
    status: "success" | "error";
    level: Level;
    trigger: Trigger;
    startedAt: string;
    endedAt: string;
    totalDurationMs: number;
    cost: CostRecord;
    files: JsonValue;
    finalOutput?: JsonValue;
    traceSpans?: JsonValue[];
    rateLimits?: JsonValue;
    usage?: JsonValue;
    /** Present only when an alert rule fired on this execution (D21). */
    alert?: AlertPayload;
  };
  links: { log: string; execution: string };
}

/** D21 `data.alert`: why the alert fired, in the rule's own terms. */
export interface AlertPayload {
  rule: string;
  /** A human sentence. */
  reason: string;
  threshold: number;
  observed: number;
  windowHours: number | null;
  /** ISO 8601: when the rule fired, the tripping execution's end. */
  firedAt: string;
}

export interface CompletionEventInput {
  eventId: string;
  timestampMs: number;
  entry: LogEntryRecord;
  include: EventIncludes;
  /** Required when rateLimits or usage is included: the same limits object the API returns (D12). */
  limits?: Limits;
  /** The alert this execution tripped, for a subscription with a rule (D21). */
  alert?: AlertPayload;
}

/**
 * The one builder of the completion event, used by every channel (webhook, e-mail, chat). Optional parts
 * are absent, not null, when their flag is off: the spec says "present only if" the flag is enabled.
 */
export function buildCompletionEvent(input: CompletionEventInput): CompletionEvent {
  const { entry, include } = input;
  const data: CompletionEvent["data"] = {
    workflowId: entry.workflowId,
    executionId: entry.executionId,
    status: entry.level === "error" ? "error" : "success",
    level: entry.level,
    trigger: entry.trigger,
    startedAt: isoFromMs(entry.startedAt),
    endedAt: isoFromMs(entry.endedAt),
    totalDurationMs: entry.totalDurationMs,
    cost: { total: entry.cost.total, tokens: entry.cost.tokens, models: entry.cost.models },
    files: (entry.files ?? null) as JsonValue,
  };
  if (include.finalOutput) data.finalOutput = (entry.finalOutput ?? null) as JsonValue;
  if (include.traceSpans) data.traceSpans = entry.traceSpans as JsonValue[];
  if (include.rateLimits || include.usage) {
    const limits = limitsJson(input.limits);
    if (include.rateLimits) data.rateLimits = limits.workflowExecutionRateLimit ?? null;
    if (include.usage) data.usage = limits.usage ?? null;
  }
  if (input.alert) data.alert = input.alert;
  return {
    id: input.eventId,
    type: completionEventType,
    timestamp: input.timestampMs,
    data,
    links: {
      log: `/v1/logs/${encodeURIComponent(entry.id)}`,
      execution: `/v1/logs/executions/${encodeURIComponent(entry.executionId)}`,
    },
  };
}

/**
 * The log's public address for people (D20: `{base_url}/api/v1/logs/<id>`): the event's own link under the
 * API prefix, so the e-mail and chat links can never disagree with `links.log`.
 */
export function logUrlOf(baseUrl: string, event: CompletionEvent): string {
  return `${baseUrl.replace(/\/+$/, "")}/api${event.links.log}`;
}

/**
 * Implicit values are emitted so a bucket with `remaining: 0` still says so; the API's limits object and the
 * event's rateLimits/usage are one shape (D12).
 */
function limitsJson(limits: Limits | undefined): JsonObject {
  if (!limits) throw new Error("limits are required when rateLimits or usage is included in the event");
  return toJson(LimitsSchema, limits, { alwaysEmitImplicit: true }) as JsonObject;
}

/**
 * The event the Test RPC sends (D18): realistic and valid against the payload table, marked as a test only
 * through its identifiers (`*_test_*`), so a receiver's schema validation passes while its logs show what it was.
 */
export function sampleCompletionEvent(options: {
  eventId: string;
  timestampMs: number;
  include: EventIncludes;
  limits?: Limits;
}): CompletionEvent {
  const endedAt = options.timestampMs;
  const startedAt = endedAt - 1_234;
  const tokens = { prompt: 120, completion: 45, total: 165 };
  const entry: LogEntryRecord = {
    id: "log_test_sample",
    workspaceId: "ws_test_sample",
    workflowId: "wf_test_sample",
    folderId: null,
    executionId: "ex_test_sample",
    billedUserId: null,
    level: "info",
    trigger: "manual",
    startedAt,
    endedAt,
    totalDurationMs: endedAt - startedAt,
    cost: {
      total: 0.000045,
      tokens,
      models: { "gpt-4o-mini": { input: 0.000018, output: 0.000027, total: 0.000045, tokens } },
    },
    files: null,
    traceSpans: [
      {
        id: "span_test_sample",
        name: "Agent",
        type: "agent",
        status: "success",
        startTime: isoFromMs(startedAt),
        endTime: isoFromMs(endedAt),
        durationMs: endedAt - startedAt,
        model: "gpt-4o-mini",
        tokens,
        cost: 0.000045,
      },
    ],
    finalOutput: { message: "This is a test event from flowlog." },
  };
  return buildCompletionEvent({ ...options, entry });
}
