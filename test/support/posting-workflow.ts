import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { Store } from "../../src/store/store.js";
import { restWithKey } from "./api-server.js";
import type { TestAccount } from "./flowlog.js";
import { until } from "./until.js";

/**
 * Issue 54's tests (D47) run executions against an upstream they control: a workflow whose one HTTP block
 * posts the input's order to a path of it, saved and started through the API as a user would.
 */
export interface PostingWorkflow {
  workflowId: string;
  /** The upstream path its HTTP block posts to. */
  path: string;
}

/** Saves the workflow in the account's workspace, posting to `path` of `origin` with no retry. */
export async function savePostingWorkflow(
  api: string,
  account: TestAccount,
  origin: string,
  path: string,
): Promise<PostingWorkflow> {
  const state = {
    blocks: {
      start: { type: "starter", name: "Start" },
      post: {
        type: "api",
        name: "Post",
        config: { method: "POST", url: `${origin}${path}`, body: { order: "<start.order>" }, retries: 0 },
      },
    },
    edges: [{ source: "start", target: "post" }],
  };
  const saved = await restWithKey(
    api,
    account.key,
    "POST",
    `/api/v1/workspaces/${account.workspaceId}/workflows`,
    {
      name: path,
      state,
    },
  );
  expect(saved.status, saved.text).toBe(200);
  return { workflowId: (saved.json as { workflow: { id: string } }).workflow.id, path };
}

/** Starts one async execution with `{order}` as its input; its execution id. */
export async function startOrder(
  api: string,
  account: TestAccount,
  workflowId: string,
  order: number,
): Promise<string> {
  const started = await restWithKey(api, account.key, "POST", `/api/v1/workflows/${workflowId}/execute`, {
    input: { order },
    async: true,
  });
  expect(started.status, started.text).toBe(202);
  return (started.json as { executionId: string }).executionId;
}

/**
 * A new posting workflow run `count` times while its path is in `down`, where the upstream answers 503:
 * each execution logged failed. Then the path is taken out of `down`, so the upstream is up again.
 */
export async function failedPostingRuns(
  api: string,
  store: Store,
  account: TestAccount,
  upstream: { origin: string; down: Set<string> },
  count: number,
): Promise<PostingWorkflow & { failed: string[] }> {
  const workflow = await savePostingWorkflow(api, account, upstream.origin, `/orders-${randomUUID()}`);
  upstream.down.add(workflow.path);
  const failed: string[] = [];
  for (let order = 0; order < count; order++)
    failed.push(await startOrder(api, account, workflow.workflowId, order));
  await until("every execution logged failed", async () => {
    const logged = await Promise.all(failed.map((id) => store.logs.getExecution(id)));
    return logged.every((e) => e?.entry.level === "error") || undefined;
  });
  upstream.down.delete(workflow.path);
  return { ...workflow, failed };
}
