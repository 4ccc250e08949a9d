import type { Client } from "@temporalio/client";
import type { RunningSelection } from "./bulk-job-ids.js";
import { executionIdOf } from "./execution-ids.js";
import { flowlogSearchAttributes } from "./search-attributes.js";

/**
 * D47: the running executions a bulk cancel selects. A running execution has no entry yet (it is written as
 * the execution ends), so the store cannot list them; Temporal's visibility can, by the search attributes
 * every execution starts with (start-execution.ts). Visibility follows a start by a moment: an execution
 * started just before the count may be missing from it.
 */
export function runningExecutionsQuery(selection: RunningSelection): string | undefined {
  const { workflowIds, triggers } = selection;
  if (workflowIds?.length === 0) return undefined;
  const names = flowlogSearchAttributes;
  const clauses = [
    "WorkflowType = 'executeWorkflow'",
    "ExecutionStatus = 'Running'",
    `${names.workspaceId.name} = ${literal(selection.workspaceId)}`,
    `StartTime <= ${literal(new Date(selection.startedTo).toISOString())}`,
  ];
  if (selection.startedFrom !== undefined) {
    clauses.push(`StartTime >= ${literal(new Date(selection.startedFrom).toISOString())}`);
  }
  if (workflowIds) clauses.push(`${names.workflowId.name} IN (${workflowIds.map(literal).join(", ")})`);
  if (triggers?.length) clauses.push(`${names.trigger.name} IN (${triggers.map(literal).join(", ")})`);
  return clauses.join(" AND ");
}

/** How many running executions the selection holds now. */
export async function countRunningExecutions(temporal: Client, selection: RunningSelection): Promise<number> {
  const query = runningExecutionsQuery(selection);
  return query === undefined ? 0 : (await temporal.workflow.count(query)).count;
}

/** The execution ids of the selection's running executions, at most `limit`. */
export async function listRunningExecutions(
  temporal: Client,
  selection: RunningSelection,
  limit: number,
): Promise<string[]> {
  const query = runningExecutionsQuery(selection);
  const ids: string[] = [];
  if (query === undefined) return ids;
  for await (const execution of temporal.workflow.list({ query })) {
    if (ids.length >= limit) break;
    ids.push(executionIdOf(execution.workflowId));
  }
  return ids;
}

/**
 * A string in a visibility query. Our ids and ISO times need no escape; anything else reaching here was
 * let through by a check before it, and would change the query's meaning, so it is refused.
 */
function literal(value: string): string {
  if (!/^[A-Za-z0-9_.:+-]*$/.test(value)) throw new Error(`not a safe visibility query value: ${value}`);
  return `'${value}'`;
}
