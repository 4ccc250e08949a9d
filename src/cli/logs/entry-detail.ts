import { type EntryJson, formatCost, formatDuration, formatTime, type SpanJson } from "./entry-json.js";

/** One entry's detail form (GetLog) for people: what ran and how it went, its spans as a tree, its output. */
export function entryDetailText(entry: EntryJson): string {
  const workflow = entry.workflow ? `${entry.workflow.name} (${entry.workflowId})` : entry.workflowId;
  const models = Object.entries(entry.cost.models ?? {}).map(
    ([model, cost]) =>
      `${model} ${formatCost(cost.total)}${cost.tokens ? `, ${cost.tokens.total} tokens` : ""}`,
  );
  const lines = [
    `${entry.id}  ${entry.level}  ${entry.trigger}`,
    `workflow   ${workflow}`,
    `execution  ${entry.executionId}`,
    `started    ${formatTime(entry.startedAt)} UTC, ran ${formatDuration(entry.totalDurationMs)}`,
    `cost       ${[formatCost(entry.cost.total), ...models].join("; ")}`,
  ];
  if (entry.retryOf) lines.push(`retry of   ${entry.retryOf}`);
  if (entry.retriedBy) lines.push(`retried by ${entry.retriedBy}`);
  const spans = entry.executionData?.traceSpans ?? [];
  if (spans.length > 0) lines.push("spans", ...spans.flatMap((span) => spanLines(span, "  ")));
  if (entry.executionData && "finalOutput" in entry.executionData) {
    lines.push("output", indent(JSON.stringify(entry.executionData.finalOutput, null, 2), "  "));
  }
  return lines.join("\n");
}

function spanLines(span: SpanJson, prefix: string): string[] {
  const model = span.model ? ` ${span.model}` : "";
  const error = span.error ? `: ${span.error}` : "";
  const line = `${prefix}${span.name} (${span.type}${model}) ${span.status} ${formatDuration(span.durationMs)}${error}`;
  return [line, ...(span.children ?? []).flatMap((child) => spanLines(child, `${prefix}  `))];
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => `${prefix}${line}`)
    .join("\n");
}
