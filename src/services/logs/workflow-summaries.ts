import type { WorkflowSummaryRecord } from "../../store/records.js";
import type { Store } from "../../store/store.js";

/** The names of a page's workflows, in one statement whatever the page holds. */
export async function workflowsOf(
  store: Store,
  entries: { workflowId: string }[],
): Promise<Map<string, WorkflowSummaryRecord>> {
  const ids = [...new Set(entries.map((e) => e.workflowId))];
  const found = await store.workflows.getWorkflowSummaries(ids);
  return new Map(found.map((workflow) => [workflow.id, workflow]));
}
