import type { JsonValue } from "@bufbuild/protobuf";
import type { Value } from "@bufbuild/protobuf/wkt";
import type { ExecutionData, TraceSpan } from "../../../gen/flowlog/logs/v1/log_entry_pb.js";
import { traceSpanFromJson } from "../../../gen/flowlog/logs/v1/logs_service_serializers.js";
import { storedLists, type WithStoredLists } from "../../codegen/serializers/runtime/json-reading.js";

/**
 * ExecutionData whose trace spans are still the canonical JSON text they were stored as (issue 13): the
 * generated JSON writers write that text as it is (storedListJson), with no parse and no messages, which
 * was most of what a one-entry answer cost, and the generated binary writers write from its JSON with no
 * messages either (write<Message>FromJson). The spans are read into messages only when something reads
 * `traceSpans` (reflection); from then on those messages are the field, and the text is no longer written.
 */
export class StoredExecutionData implements ExecutionData, WithStoredLists {
  readonly $typeName = "flowlog.logs.v1.ExecutionData";
  finalOutput?: Value;
  #traceSpans: TraceSpan[] | undefined;
  readonly #traceSpansJson: string;

  /** `traceSpansJson` must be canonical: log_entries.trace_spans_canonical, isCanonicalTraceSpanList. */
  constructor(traceSpansJson: string, finalOutput: Value | undefined) {
    this.#traceSpansJson = traceSpansJson;
    this.finalOutput = finalOutput;
  }

  get traceSpans(): TraceSpan[] {
    if (this.#traceSpans === undefined) {
      this.#traceSpans = (JSON.parse(this.#traceSpansJson) as JsonValue[]).map(traceSpanFromJson);
    }
    return this.#traceSpans;
  }

  set traceSpans(spans: TraceSpan[]) {
    this.#traceSpans = spans;
  }

  [storedLists](field: string): string | undefined {
    return field === "traceSpans" && this.#traceSpans === undefined ? this.#traceSpansJson : undefined;
  }
}
