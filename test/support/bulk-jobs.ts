import { expect } from "vitest";
import type { Store } from "../../src/store/store.js";
import type { BulkKind } from "../../src/temporal/bulk-job-ids.js";
import { restWithKey } from "./api-server.js";
import { createAccount, type TestAccount } from "./flowlog.js";
import { failedPostingRuns, type PostingUpstream, type PostingWorkflow } from "./posting-workflow.js";
import { until, untilApi } from "./until.js";

/**
 * Issue 54's bulk jobs (D47) as their tests ask for them, read them and check what they did, through the
 * API and the store.
 */

/** A bulk job as GetBulkJob answers it. */
export interface BulkJobJson {
  id: string;
  kind: string;
  status: string;
  total: number;
  done: number;
  failed: number;
  processed: number;
  waitingUntil?: string;
  lastFailure?: string;
}

/** BulkRetryExecutions or BulkCancelExecutions on the account's workspace. */
export function requestBulkJob(
  api: string,
  account: TestAccount,
  kind: BulkKind,
  body: Record<string, unknown>,
) {
  const method = kind === "retry" ? "bulkRetry" : "bulkCancel";
  const path = `/api/v1/workspaces/${account.workspaceId}/executions:${method}`;
  return restWithKey(api, account.key, "POST", path, body);
}

export async function bulkJobOf(api: string, account: TestAccount, id: string): Promise<BulkJobJson> {
  const path = `/api/v1/workspaces/${account.workspaceId}/bulk-jobs/${id}`;
  const read = await restWithKey(api, account.key, "GET", path);
  expect(read.status, read.text).toBe(200);
  return (read.json as { job: BulkJobJson }).job;
}

/** The job once it has ended, as GetBulkJob then answers it. */
export const bulkJobEnded = (api: string, account: TestAccount, id: string, ms = 60_000) =>
  untilApi(
    `bulk job ${id} ended`,
    async () => {
      const job = await bulkJobOf(api, account, id);
      return job.status === "running" ? undefined : job;
    },
    ms,
  );

/** The workflow's entries, every one of them, oldest first. */
export async function entriesOf(store: Store, account: TestAccount, workflowId: string) {
  const listed = await store.logs.list(
    { workspaceId: account.workspaceId, workflowIds: [workflowId] },
    { order: "asc", limit: 10_000, withCostDetail: false, withTraceSpans: false, withFinalOutput: true },
  );
  return listed.entries;
}

/** A posting workflow's executions logged failed (failedPostingRuns), in its account's workspace. */
export interface Outage extends PostingWorkflow {
  account: TestAccount;
  failed: string[];
}

/**
 * A new account's workflow whose HTTP block posts the input's order to a path of the upstream, run `count`
 * times while the path is down, so each execution is logged failed; then the path comes back up.
 */
export async function postingOutage(
  api: string,
  store: Store,
  upstream: Pick<PostingUpstream, "origin" | "down">,
  count: number,
): Promise<Outage> {
  const account = await createAccount(store);
  return { account, ...(await failedPostingRuns(api, store, account, upstream, count)) };
}

/** Each failed execution's retries, by the retry links of the workflow's logged entries. */
export async function retriesOf(store: Store, { account, workflowId, failed }: Outage) {
  const retries = new Map<string, string[]>(failed.map((id) => [id, []]));
  for (const entry of await entriesOf(store, account, workflowId)) {
    const { retryOf } = await store.logs.retryLinks(entry.executionId);
    if (retryOf) retries.get(retryOf)?.push(entry.executionId);
  }
  return retries;
}

/**
 * Once each failed execution has a logged retry: each exactly one, logged info, and no other execution of
 * the workflow logged; each order was refused while the upstream was down and reached it again, answered,
 * by its retry. How many calls that took is not pinned: an HTTP block's call is made at least once, not
 * exactly once. Its first try is a local activity that runs again when the workflow task recording it is
 * late (a loaded worker), and its activity runs again when a heartbeat is late or its worker is killed.
 */
export async function expectEachRetriedOnce(
  store: Store,
  upstream: Pick<PostingUpstream, "ordersTo">,
  run: Outage,
): Promise<void> {
  const retries = await until("every retry logged", async () => {
    const found = await retriesOf(store, run);
    return [...found.values()].every((r) => r.length > 0) ? found : undefined;
  });
  expect([...retries.values()].map((r) => r.length)).toEqual(run.failed.map(() => 1));
  for (const [retryOf, [retry]] of retries) {
    const logged = await store.logs.getExecution(retry as string);
    expect(logged?.entry.level, `the retry of ${retryOf}`).toBe("info");
    expect((await store.logs.retryLinks(retryOf)).retriedBy).toBe(retry);
  }
  // The failed executions and their retries, and nothing else the job might have started.
  expect(await entriesOf(store, run.account, run.workflowId)).toHaveLength(2 * run.failed.length);
  const orders = run.failed.map((_, order) => order);
  const distinct = (posted: number[]) => [...new Set(posted)].sort((a, b) => a - b);
  expect(distinct(upstream.ordersTo(run.path, 503)), "orders refused while down").toEqual(orders);
  expect(distinct(upstream.ordersTo(run.path, 200)), "orders answered by their retry").toEqual(orders);
}
