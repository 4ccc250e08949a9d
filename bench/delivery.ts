import { setTimeout as sleep } from "node:timers/promises";
import { executeLoad } from "./execution.js";
import { createHttpBlockWorkflow, type FlowlogStack, startFlowlogStack } from "./support/flowlog-stack.js";
import type { LoadPlan } from "./support/load.js";
import { startItemApi, startReceiver } from "./support/receiver.js";
import { type Bench, type BenchOptions, ms, perSecond, ratio, type Table } from "./support/report.js";
import { distribution } from "./support/sample.js";

interface Plan {
  load: LoadPlan;
  subscriptionCounts: number[];
  /** How long to wait for the last delivery after the executions stop. */
  drainMs: number;
}

const plans: Record<"quick" | "full", Plan> = {
  quick: {
    load: { connections: 8, seconds: 3, warmupSeconds: 1 },
    subscriptionCounts: [0, 1, 10],
    drainMs: 60_000,
  },
  full: {
    load: { connections: 8, seconds: 20, warmupSeconds: 3 },
    subscriptionCounts: [0, 1, 10],
    drainMs: 300_000,
  },
};

interface Receipt {
  endedAt: number;
  arrivedAt: number;
}

/**
 * Notifications under load (issue 7, item 5): the execution bench's sync executions with 0 (the
 * baseline), 1 and 10 webhook subscriptions matching every execution; each delivery is timed from the
 * execution's end (the event's `data.endedAt`, the log entry's end) to its arrival at a loopback receiver.
 */
export const deliveryBench: Bench = {
  name: "delivery",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    let receipts: Receipt[] = [];
    const webhook = await startReceiver((_request, body, arrivedAt, response) => {
      const event = JSON.parse(body) as { data: { endedAt: string } };
      receipts.push({ endedAt: Date.parse(event.data.endedAt), arrivedAt });
      response.writeHead(204).end();
    });
    const itemApi = await startItemApi();
    const stack = await startFlowlogStack();
    try {
      const workflowId = await createHttpBlockWorkflow(stack, `${itemApi.url}/items/1`);
      const rows: (string | number)[][] = [];
      let baseline: number | undefined;
      let subscriptions = 0;
      for (const count of plan.subscriptionCounts) {
        for (; subscriptions < count; subscriptions++)
          await subscribe(stack, `${webhook.url}/hooks/${subscriptions}`);
        receipts = [];
        const loadStarted = Date.now();
        const load = await executeLoad(stack, workflowId, plan.load);
        // Every execution since the subscriptions were made (the warm-up and the check included) delivers.
        const executions = await executionsSince(stack, loadStarted);
        const expected = executions * count;
        const drainUntil = Date.now() + plan.drainMs;
        while (receipts.length < expected && Date.now() < drainUntil) await sleep(100);
        if (receipts.length < expected) {
          throw new Error(`${receipts.length} of ${expected} deliveries arrived within ${plan.drainMs} ms`);
        }
        baseline ??= load.requestsPerSecond;
        const latency = distribution(receipts.map((r) => r.arrivedAt - r.endedAt));
        const lastArrival = Math.max(...receipts.map((r) => r.arrivedAt));
        rows.push([
          count,
          perSecond(load.requestsPerSecond),
          ratio(load.requestsPerSecond / baseline),
          ms(load.latency.p99),
          receipts.length,
          count === 0 ? "" : perSecond((receipts.length * 1000) / (lastArrival - loadStarted)),
          count === 0 ? "" : ms(latency.p50),
          count === 0 ? "" : ms(latency.p99),
          count === 0 ? "" : ms(latency.max),
        ]);
      }
      return [
        {
          title: `delivery: webhooks per execution, ${plan.load.connections} sync executions in flight, ${plan.load.seconds} s`,
          columns: [
            "subscriptions",
            "executions/s",
            "vs 0 subscriptions",
            "execute p99 ms",
            "deliveries",
            "deliveries/s",
            "end→receipt p50 ms",
            "end→receipt p99 ms",
            "end→receipt max ms",
          ],
          rows,
          note:
            "deliveries/s: deliveries received over the time from the load's start to the last arrival. " +
            "end→receipt: arrival at the loopback receiver minus the event's data.endedAt.",
        } satisfies Table,
      ];
    } finally {
      await stack.stop();
      await itemApi.close();
      await webhook.close();
    }
  },
};

async function subscribe(stack: FlowlogStack, url: string): Promise<void> {
  await stack.post(`/api/v1/workspaces/${stack.workspaceId}/notifications`, {
    channel: "webhook",
    webhook: { url },
    allWorkflows: true,
  });
}

/** Executions whose log entry started at or after `since`, counted through the logs API. */
async function executionsSince(stack: FlowlogStack, since: number): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({
      workspaceId: stack.workspaceId,
      startDate: new Date(since).toISOString(),
      limit: "100",
      ...(cursor ? { cursor } : {}),
    });
    const response = await fetch(`http://${stack.api}/api/v1/logs?${query}`, { headers: stack.auth });
    const page = (await response.json()) as { data: unknown[]; nextCursor?: string };
    if (!response.ok)
      throw new Error(`GET /api/v1/logs answered ${response.status}: ${JSON.stringify(page)}`);
    count += page.data.length;
    cursor = page.nextCursor || undefined;
  } while (cursor);
  return count;
}
