import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { expect } from "vitest";
import type { Store } from "../../src/store/store.js";
import { restWithKey } from "./api-server.js";
import type { TestAccount } from "./flowlog.js";
import { sendJson, startReceiver } from "./http-receiver.js";
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

/**
 * The upstream the posting workflows call: it answers 503 to the paths in `down` (an execution posting
 * there is logged failed), holds the calls to the paths in `held` unanswered (an execution posting there
 * runs on), and answers 200 to any other.
 */
export interface PostingUpstream {
  origin: string;
  down: Set<string>;
  held: Set<string>;
  /** The orders posted to a path, as they arrived; only those answered `status` when one is named. */
  ordersTo(path: string, status?: number): number[];
  /** Answers the calls it holds, then closes. */
  close(): Promise<void>;
}

export async function startPostingUpstream(): Promise<PostingUpstream> {
  const down = new Set<string>();
  const held = new Set<string>();
  const waiting: ServerResponse[] = [];
  const pathOf = (target: string) => target.split("?")[0] as string;
  // Each call as it arrived, with the status it was (or, held, will be) answered.
  const calls: { path: string; order: number; status: number }[] = [];
  const receiver = await startReceiver((request, response) => {
    const path = pathOf(request.target);
    const status = down.has(path) && !held.has(path) ? 503 : 200;
    calls.push({ path, order: (JSON.parse(request.body) as { order: number }).order, status });
    if (held.has(path)) waiting.push(response);
    else if (status === 503) sendJson(response, 503, { error: "down for maintenance" });
    else sendJson(response, 200, { ok: true });
  });
  return {
    origin: receiver.origin,
    down,
    held,
    ordersTo: (path, status) =>
      calls
        .filter((call) => call.path === path && (status === undefined || call.status === status))
        .map((call) => call.order),
    close: async () => {
      for (const response of waiting.splice(0)) sendJson(response, 200, { ok: true });
      await receiver.close();
    },
  };
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
  upstream: Pick<PostingUpstream, "origin" | "down">,
  count: number,
): Promise<PostingWorkflow & { failed: string[] }> {
  const workflow = await savePostingWorkflow(api, account, upstream.origin, `/orders-${randomUUID()}`);
  upstream.down.add(workflow.path);
  const failed: string[] = [];
  for (let order = 0; order < count; order++)
    failed.push(await startOrder(api, account, workflow.workflowId, order));
  // A bound for a hang, not a pace: 500 executions queued at once took over 30 s on two cores shared
  // with a long bench's seeding.
  await until(
    "every execution logged failed",
    async () => {
      const logged = await Promise.all(failed.map((id) => store.logs.getExecution(id)));
      return logged.every((e) => e?.entry.level === "error") || undefined;
    },
    30_000 + count * 100,
  );
  upstream.down.delete(workflow.path);
  return { ...workflow, failed };
}

/**
 * `count` executions of the workflow started while the upstream holds its path's calls: each runs on, in its
 * HTTP block or waiting for its workspace's turn to call (D26), until it is cancelled or the block times out.
 */
export async function heldPostingRuns(
  api: string,
  account: TestAccount,
  upstream: Pick<PostingUpstream, "held">,
  { workflowId, path }: PostingWorkflow,
  count: number,
): Promise<string[]> {
  upstream.held.add(path);
  const ids: string[] = [];
  for (let order = 0; order < count; order++) ids.push(await startOrder(api, account, workflowId, order));
  return ids;
}
