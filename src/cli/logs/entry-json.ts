/** The parts of a log entry's JSON (docs/logs-api.md) that the CLI's human forms show. */
export interface EntryJson {
  id: string;
  workflowId: string;
  executionId: string;
  level: string;
  trigger: string;
  startedAt: string;
  endedAt: string;
  totalDurationMs: number;
  cost: { total: number; models?: Record<string, { total: number; tokens?: { total: number } }> };
  workflow?: { name: string };
  executionData?: { traceSpans?: SpanJson[]; finalOutput?: unknown };
  retryOf?: string;
  retriedBy?: string;
}

export interface SpanJson {
  name: string;
  type: string;
  status: string;
  durationMs: number;
  error?: string;
  model?: string;
  children?: SpanJson[];
}

/** `12ms`, `1.2s`, `3m 05s`, `1h 02m`: a duration at a glance. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes}m ${String(Math.floor((ms % 60_000) / 1_000)).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

/** USD to four decimals; a cost too small to show there says so rather than reading as free. */
export function formatCost(usd: number): string {
  if (usd === 0) return "$0";
  return usd < 0.0001 ? "<$0.0001" : `$${usd.toFixed(4)}`;
}

/** `2026-11-01 10:00:00`: startedAt to the second, in UTC as the API gives it. */
export function formatTime(iso: string): string {
  return iso.slice(0, 19).replace("T", " ");
}
