import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { NullValue, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Limits } from "../../../gen/flowlog/logs/v1/limits_pb.js";
import {
  type Cost,
  CostSchema,
  ExecutionDataSchema,
  type LogEntry,
  LogEntrySchema,
  TraceSpanSchema,
} from "../../../gen/flowlog/logs/v1/log_entry_pb.js";
import type { ExecutionMetadata } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { ExecutionMetadataSchema } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import type { CostRecord, LogEntryRecord, WorkflowRecord } from "../../store/records.js";
import { leaveOut } from "../../util/presence.js";
import { isoFromMs } from "../../util/time.js";

/** Which fields a view of a log entry carries (spec "Log entry", D9). */
export interface EntryView {
  /** details=full and the detail form: workflow and the full cost. */
  full: boolean;
  traceSpans: boolean;
  finalOutput: boolean;
  /** The detail form also carries limits inside data (spec "Log entry (detail form)"). */
  limits?: Limits;
}

/** The one mapping from a stored log entry to its API form, for the list and the detail endpoints. */
export function logEntryView(
  record: LogEntryRecord,
  workflow: WorkflowRecord | undefined,
  view: EntryView,
): LogEntry {
  const entry = create(LogEntrySchema, {
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
      ? fullCost(record.cost)
      : leaveOut(create(CostSchema, { total: record.cost.total }), "models"),
    files: jsonValue(record.files),
  });
  if (view.full) {
    entry.workflow = {
      $typeName: "flowlog.logs.v1.WorkflowSummary",
      id: record.workflowId,
      name: workflow?.name ?? "",
      description: workflow?.description ?? "",
    };
  }
  if (view.traceSpans || view.finalOutput) {
    const executionData = create(ExecutionDataSchema, {
      traceSpans: view.traceSpans
        ? record.traceSpans.map((span) => fromJson(TraceSpanSchema, span as JsonValue))
        : [],
      finalOutput: view.finalOutput ? jsonValue(record.finalOutput ?? null) : undefined,
    });
    // D30: traceSpans not asked for is absent, not [] (finalOutput has presence of its own).
    entry.executionData = view.traceSpans ? executionData : leaveOut(executionData, "traceSpans");
  }
  if (view.limits) entry.limits = view.limits;
  return entry;
}

export function executionMetadata(record: LogEntryRecord): ExecutionMetadata {
  return create(ExecutionMetadataSchema, {
    trigger: record.trigger,
    startedAt: isoFromMs(record.startedAt),
    endedAt: isoFromMs(record.endedAt),
    totalDurationMs: record.totalDurationMs,
    cost: fullCost(record.cost),
  });
}

function fullCost(cost: CostRecord): Cost {
  return create(CostSchema, { total: cost.total, tokens: cost.tokens, models: cost.models });
}

/** Any JSON as google.protobuf.Value; null stays null (D7: files is null when there are none). */
function jsonValue(value: unknown): Value {
  if (value === null || value === undefined) {
    return create(ValueSchema, { kind: { case: "nullValue", value: NullValue.NULL_VALUE } });
  }
  return fromJson(ValueSchema, value as JsonValue);
}
