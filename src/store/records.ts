/** What the store keeps, in the product's words (D5, D17). Times are Unix milliseconds. */

import type { Plan } from "../limits/plans.js";

export type { Plan };

export const levels = ["info", "error"] as const;
export type Level = (typeof levels)[number];

export const triggers = ["api", "webhook", "schedule", "manual", "chat"] as const;
export type Trigger = (typeof triggers)[number];

export interface UserRecord {
  id: string;
  email: string;
  plan: Plan;
  createdAt: number;
}

export interface WorkspaceRecord {
  id: string;
  name: string;
  createdAt: number;
}

export interface ApiKeyRecord {
  id: string;
  userId: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface WorkflowRecord {
  id: string;
  workspaceId: string;
  folderId: string | null;
  name: string;
  description: string;
  version: number;
  /** The workflow graph as the protobuf JSON of flowlog.workflows.v1.WorkflowState. */
  state: unknown;
  createdAt: number;
  updatedAt: number;
}

/** What a log entry's detail form shows of its workflow (spec: workflow {id, name, description}). */
export type WorkflowSummaryRecord = Pick<WorkflowRecord, "id" | "name" | "description">;

/** A workflow as the store returns it: deleting only marks it, so its logs keep their workflow (D17). */
export interface StoredWorkflowRecord extends WorkflowRecord {
  deletedAt: number | null;
}

/** One saved version of a workflow (D13): what an execution snapshots and runs. */
export interface WorkflowVersionRecord {
  workflowId: string;
  version: number;
  name: string;
  description: string;
  /** Protobuf JSON of flowlog.workflows.v1.WorkflowState. */
  state: unknown;
  createdAt: number;
}

export interface EnvironmentVariableRecord {
  workspaceId: string;
  name: string;
  createdAt: number;
  updatedAt: number;
}

export interface TokenCounts {
  prompt: number;
  completion: number;
  total: number;
}

export interface ModelCostRecord {
  input: number;
  output: number;
  total: number;
  tokens: TokenCounts;
}

export interface CostRecord {
  total: number;
  tokens: TokenCounts;
  models: Record<string, ModelCostRecord>;
}

/** An entry's cost as a page without its detail reads it: the total only (D9, D30). */
export type CostTotalRecord = Pick<CostRecord, "total">;

/**
 * An entry's cost with its tokens and models still the text stored with it (cost_json), when that text with
 * the total written first is exactly the Cost's canonical protobuf JSON (checked as the entry was written,
 * log_entries.cost_canonical): the JSON answers write it as it is, and nothing parses it unless asked
 * (issue 53: parsing and writing back each entry's cost was a sixth of an export's time).
 */
export interface StoredCostRecord {
  total: number;
  detailJson: string;
}

export interface LogEntryRecord {
  id: string;
  workspaceId: string;
  workflowId: string;
  folderId: string | null;
  executionId: string;
  billedUserId: string | null;
  level: Level;
  trigger: Trigger;
  startedAt: number;
  endedAt: number;
  totalDurationMs: number;
  cost: CostRecord;
  files: unknown;
  /** Protobuf JSON of flowlog.logs.v1.TraceSpan[] (D17). */
  traceSpans: unknown[];
  finalOutput: unknown;
}

/**
 * An entry's files and final output as the answers that show them read them: the JSON text stored with the
 * entry, which JSON.stringify wrote (executionRows), handed on unparsed for the writers to write as it is
 * (valueFromStoredText; issue 53). filesJson is null when the entry has none; finalOutputJson is undefined
 * when it has none or it was not read.
 */
interface StoredJsonTexts {
  filesJson: string | null;
  finalOutputJson: string | undefined;
}

/**
 * A log entry as a page of the list reads it: its trace spans and final output only when the page asked
 * for them (empty otherwise), the spans possibly still as their canonical text, its cost's tokens and
 * models only with details=full (D9, D30).
 */
export interface ListedEntryRecord
  extends Omit<LogEntryRecord, "cost" | "traceSpans" | "files" | "finalOutput">,
    StoredJsonTexts {
  cost: CostRecord | CostTotalRecord | StoredCostRecord;
  traceSpans: unknown[] | CanonicalTraceSpans;
}

/**
 * Trace spans as they were stored, when the stored text is exactly their canonical protobuf JSON (checked
 * as the entry was written, log_entries.trace_spans_canonical): the JSON answers write it as it is, and
 * nothing parses it unless asked (issue 13).
 */
export interface CanonicalTraceSpans {
  canonicalJson: string;
}

/**
 * A log entry as GET /api/v1/logs/{id} reads it: its cost and trace spans possibly still as their canonical
 * text.
 */
export interface ViewedEntryRecord
  extends Omit<LogEntryRecord, "cost" | "traceSpans" | "files" | "finalOutput">,
    StoredJsonTexts {
  cost: CostRecord | StoredCostRecord;
  traceSpans: unknown[] | CanonicalTraceSpans;
}

/** A log entry together with the snapshot of the workflow state its execution ran (D13). */
export interface ExecutionRecord {
  entry: LogEntryRecord;
  /** Protobuf JSON of flowlog.workflows.v1.WorkflowState. */
  workflowState: unknown;
  /** The version that state is (D47); null or absent for executions logged before it was kept. */
  workflowVersion?: number | null;
}

/** D47: a retry and the execution it retries, recorded as the retry starts. */
export interface RetryLink {
  executionId: string;
  retryOf: string;
  createdAt: number;
}

/** D47: what an execution's views say of retries: the one it retries, and its newest retry. */
export interface RetryLinks {
  retryOf?: string;
  retriedBy?: string;
}

/**
 * What a create under a count quota (D26) returns: the new record, or the count already there that
 * refused it. The store counts and inserts in one immediate transaction, so creates running at once, in
 * any process sharing the file, never pass the quota together.
 */
export type CappedCreate<T> = { created: T } | { full: number };
