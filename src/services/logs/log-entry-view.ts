import type { JsonValue } from "@bufbuild/protobuf";
import type { Value } from "@bufbuild/protobuf/wkt";
import type { Limits } from "../../../gen/flowlog/logs/v1/limits_pb.js";
import type { ExecutionData, LogEntry, WorkflowSummary } from "../../../gen/flowlog/logs/v1/log_entry_pb.js";
import type { ExecutionMetadata } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { traceSpanFromJson } from "../../../gen/flowlog/logs/v1/logs_service_serializers.js";
import { valueFromJson, valueFromStoredText } from "../../codegen/serializers/runtime/json-reading.js";
import { leaveOut } from "../../codegen/serializers/runtime/presence.js";
import { costDetail } from "../../store/log-rows.js";
import type {
  ListedEntryRecord,
  LogEntryRecord,
  RetryLinks,
  ViewedEntryRecord,
  WorkflowSummaryRecord,
} from "../../store/records.js";
import { isoFromMs } from "../../util/time.js";
import { costMessage, costOf, fullCost } from "./cost-message.js";
import { StoredExecutionData } from "./stored-execution-data.js";

/** Which fields a view of a log entry carries (spec "Log entry", D9). */
export interface EntryView {
  /** details=full and the detail form: workflow and the full cost. */
  full: boolean;
  traceSpans: boolean;
  finalOutput: boolean;
  /** The detail form also carries limits inside data (spec "Log entry (detail form)"). */
  limits?: Limits;
  /** ...and what retries it and what it retries (D47). */
  retries?: RetryLinks;
}

/*
 * The mapping from a stored log entry to its API form, for the list and the detail endpoints. Messages are
 * object literals of the generated types (tsc holds each to its .proto) rather than `create` calls: a page
 * builds hundreds of them, and `create` walks the descriptor for each (issue 13). For the same reason the
 * stored trace spans and JSON values are read by generated readers (protoc-gen-serializers), which build
 * what `fromJson` builds without its reflection.
 */

export function logEntryView(
  record: ListedEntryRecord | ViewedEntryRecord,
  workflow: WorkflowSummaryRecord | undefined,
  view: EntryView,
): LogEntry {
  return {
    $typeName: "flowlog.logs.v1.LogEntry",
    id: record.id,
    workflowId: record.workflowId,
    executionId: record.executionId,
    level: record.level,
    trigger: record.trigger,
    startedAt: isoFromMs(record.startedAt),
    endedAt: isoFromMs(record.endedAt),
    totalDurationMs: record.totalDurationMs,
    // D30: basic asks for the total only; models is absent, not {}.
    cost: view.full
      ? costMessage(costDetail(record.cost))
      : leaveOut(costOf(record.cost.total, undefined, {}), "models"),
    files: storedValue(record.filesJson),
    workflow: view.full ? workflowSummary(record.workflowId, workflow) : undefined,
    executionData: view.traceSpans || view.finalOutput ? executionData(record, view) : undefined,
    limits: view.limits,
    retryOf: view.retries?.retryOf,
    retriedBy: view.retries?.retriedBy,
  };
}

export function executionMetadata(
  record: Pick<LogEntryRecord, "trigger" | "startedAt" | "endedAt" | "totalDurationMs" | "cost">,
  retries: RetryLinks,
  workflowVersion: number | null | undefined,
): ExecutionMetadata {
  return {
    $typeName: "flowlog.logs.v1.ExecutionMetadata",
    trigger: record.trigger,
    startedAt: isoFromMs(record.startedAt),
    endedAt: isoFromMs(record.endedAt),
    totalDurationMs: record.totalDurationMs,
    cost: fullCost(record.cost),
    retryOf: retries.retryOf,
    retriedBy: retries.retriedBy,
    workflowVersion: workflowVersion ?? undefined,
  };
}

function workflowSummary(id: string, workflow: WorkflowSummaryRecord | undefined): WorkflowSummary {
  return {
    $typeName: "flowlog.logs.v1.WorkflowSummary",
    id,
    name: workflow?.name ?? "",
    description: workflow?.description ?? "",
  };
}

function executionData(record: ListedEntryRecord | ViewedEntryRecord, view: EntryView): ExecutionData {
  const finalOutput = view.finalOutput ? storedValue(record.finalOutputJson) : undefined;
  const spans = record.traceSpans;
  if (view.traceSpans && !Array.isArray(spans))
    return new StoredExecutionData(spans.canonicalJson, finalOutput);
  const data: ExecutionData = {
    $typeName: "flowlog.logs.v1.ExecutionData",
    // Asked for, the spans are an array here: stored text was handed on above.
    traceSpans:
      view.traceSpans && Array.isArray(spans)
        ? spans.map((span) => traceSpanFromJson(span as JsonValue))
        : [],
    finalOutput,
  };
  // D30: traceSpans not asked for is absent, not [] (finalOutput has presence of its own).
  return view.traceSpans ? data : leaveOut(data, "traceSpans");
}

/**
 * Stored JSON text as google.protobuf.Value, kept as its text for the JSON writers (valueFromStoredText);
 * none is null (D7: files is null when there are none). A Value field of a message is read 2 deep.
 */
function storedValue(text: string | null | undefined): Value {
  return text == null ? valueFromJson(null) : valueFromStoredText(text, 2);
}
