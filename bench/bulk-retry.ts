import { benchStack, type FlowlogStack, getJson } from "./support/flowlog-stack.js";
import { type Receiver, startReceiver } from "./support/receiver.js";
import { type Bench, type BenchOptions, perSecond, ratio } from "./support/report.js";
import { timed } from "./support/sample.js";

/** Executions per side: the 1,000, or 50 with --quick. */
const counts = { quick: 50, full: 1_000 };

/**
 * Issue 54's goal (D47): "a bulk retry of 1,000 failed one-block executions completes at ≥ 0.8x the rate of
 * starting the same 1,000 executions through the API at the same concurrency". One stack (dev server,
 * `flowlog serve`, `flowlog worker`) and a workflow of one HTTP block posting to a loopback upstream, with no
 * block retry. The executions are run once while the upstream answers 503, so each is logged failed; then the
 * upstream answers 200.
 *
 * - API starts (the baseline): the same workflow started through `POST .../execute` with `async: true`, one
 *   call at a time as the job starts its retries one at a time, the clock running until every execution is
 *   logged.
 * - Bulk retry: one `:bulkRetry` of the failed ones (from the start, level error), the clock running from the
 *   call until the job has completed and every retry is logged.
 */
export const bulkRetryBench: Bench = {
  name: "bulk-retry",
  async run(options: BenchOptions) {
    const count = options.quick ? counts.quick : counts.full;
    let up = false;
    const upstream = await startReceiver((_request, _body, _arrivedAt, response) => {
      response.writeHead(up ? 200 : 503, { "content-type": "application/json" });
      response.end(up ? '{"ok":true}' : '{"error":"down"}');
    });
    const stack = await benchStack(options);
    try {
      const failing = await postingWorkflow(stack, upstream, "bulk retry");
      await startAll(stack, failing, count);
      await allLogged(stack, failing, "error", count);
      up = true;

      const started = await postingWorkflow(stack, upstream, "api starts");
      const { seconds: apiStarts } = await timed(async () => {
        await startAll(stack, started, count);
        await allLogged(stack, started, "info", count);
      });

      const { seconds: bulk } = await timed(async () => {
        const { job } = await stack.post<{ job: { id: string } }>(
          `/api/v1/workspaces/${stack.workspaceId}/executions:bulkRetry`,
          { workflowIds: [failing], level: "error" },
        );
        await jobCompleted(stack, job.id, count);
        await allLogged(stack, failing, "info", count);
      });

      const rate = (seconds: number) => count / seconds;
      return [
        {
          title: `bulk-retry: ${count} failed one-block executions retried by one job, against ${count} started through the API`,
          columns: ["side", "executions", "seconds", "executions/s", "vs API starts"],
          rows: [
            [
              "API starts, one call at a time",
              count,
              apiStarts.toFixed(1),
              perSecond(rate(apiStarts)),
              "1.00x",
            ],
            ["bulk retry job", count, bulk.toFixed(1), perSecond(rate(bulk)), ratio(apiStarts / bulk)],
          ],
          note:
            "Both sides run the same one-HTTP-block workflow on the same stack, the upstream up; each is timed " +
            "until its last execution is logged (the bulk side also until its job completed). Goal (issue 54): " +
            "the bulk retry >= 0.8x the API starts' rate.",
        },
      ];
    } finally {
      await stack.stop();
      await upstream.close();
    }
  },
};

/** Saves a workflow of one HTTP block posting to the upstream, with no retry; its id. */
async function postingWorkflow(stack: FlowlogStack, upstream: Receiver, name: string): Promise<string> {
  const { workflow } = await stack.post<{ workflow: { id: string } }>(
    `/api/v1/workspaces/${stack.workspaceId}/workflows`,
    {
      name,
      state: {
        blocks: {
          start: { type: "starter", name: "Start" },
          post: {
            type: "api",
            name: "Post",
            config: { method: "POST", url: `${upstream.url}/orders`, retries: 0 },
          },
        },
        edges: [{ source: "start", target: "post" }],
      },
    },
  );
  return workflow.id;
}

/** Starts `count` async executions of the workflow, one call at a time. */
async function startAll(stack: FlowlogStack, workflowId: string, count: number): Promise<void> {
  for (let order = 0; order < count; order++) {
    await stack.post(`/api/v1/workflows/${workflowId}/execute`, { input: { order }, async: true });
  }
}

/** Waits until `count` entries of the workflow at `level` are logged (each page read as few fields as it can). */
async function allLogged(
  stack: FlowlogStack,
  workflowId: string,
  level: string,
  count: number,
): Promise<void> {
  const deadline = Date.now() + 30 * 60_000;
  for (;;) {
    const { data } = await getJson<{ data: unknown[] }>(
      stack,
      `/api/v1/logs?workspaceId=${stack.workspaceId}&workflowIds=${workflowId}&level=${level}&limit=1000`,
    );
    if (data.length >= count) return;
    if (Date.now() > deadline)
      throw new Error(`${data.length} of ${count} ${level} entries logged in 30 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Waits until the bulk job has completed, having retried all `count`. */
async function jobCompleted(stack: FlowlogStack, jobId: string, count: number): Promise<void> {
  for (;;) {
    const { job } = await getJson<{ job: { status: string; done: number; failed: number } }>(
      stack,
      `/api/v1/workspaces/${stack.workspaceId}/bulk-jobs/${jobId}`,
    );
    if (job.status !== "running") {
      if (job.status !== "completed" || job.done !== count) {
        throw new Error(`the bulk job ended ${JSON.stringify(job)}, not completed with ${count} retried`);
      }
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
