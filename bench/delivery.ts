import { setTimeout as sleep } from "node:timers/promises";
import { Client, Connection } from "@temporalio/client";
import { executeLoad, noopLoad, noopWorker } from "./execution.js";
import { benchStack, createHttpBlockWorkflow, type FlowlogStack } from "./support/flowlog-stack.js";
import { type LoadPlan, loadLength, quickTickMs } from "./support/load.js";
import { noopTaskQueue } from "./support/noop-worker.js";
import type { noopFanOut } from "./support/noop-workflow.js";
import { startItemApi, startReceiver } from "./support/receiver.js";
import { type Bench, type BenchOptions, ms, perSecond, ratio, type Table } from "./support/report.js";
import { distribution } from "./support/sample.js";

interface Plan {
  subscriptionCounts: number[];
  /** Executions in flight: one alone shows the path's own latency, several show it under load. */
  concurrency: number[];
  seconds: number;
  /** Load thrown away before each measured load. */
  warmupSeconds: number;
  /** The loads' LoadPlan.tickMs, requests and warmupRequests. */
  tickMs?: number;
  requests?: number;
  warmupRequests?: number;
  /** How long to wait for the last delivery after the executions stop. */
  drainMs: number;
  /** How often the wait counts the executions and deliveries so far (a page of the logs API per 100). */
  lookMs: number;
}

const plans: Record<"quick" | "full", Plan> = {
  quick: {
    // Full mode's rows of 1 and 10 subscriptions run the same fan-out as one of three, with a third of the
    // deliveries of ten to wait for, and its floors at 3 those of 1 and 10.
    subscriptionCounts: [0, 3],
    concurrency: [8],
    seconds: 0.5,
    warmupSeconds: 0.25,
    tickMs: quickTickMs,
    requests: 2,
    warmupRequests: 0,
    drainMs: 60_000,
    lookMs: 200,
  },
  full: {
    subscriptionCounts: [0, 1, 10],
    concurrency: [1, 8],
    seconds: 15,
    warmupSeconds: 0.5,
    drainMs: 300_000,
    lookMs: 500,
  },
};

interface Receipt {
  /** service-delivery-id: D19 allows a delivery to arrive again, with the same id. */
  deliveryId: string;
  startedAt: number;
  endedAt: number;
  arrivedAt: number;
}

/**
 * Notifications (issue 7, item 5): the execution bench's sync executions with 0, 1 and 10 webhook
 * subscriptions matching every execution. Each delivery is timed from the execution's end (the event's
 * `data.endedAt`, the log entry's end) to its arrival at a loopback receiver; the no-op workflow baseline
 * of the execution bench, on the same server, says what one Temporal workflow costs there. Executions and
 * deliveries run in workers of their own, as a deployment scales them apart (issue 51), and a last row
 * stops the deliveries' worker during the load, then starts it.
 */
export const deliveryBench: Bench = {
  name: "delivery",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    let receipts: Receipt[] = [];
    const webhook = await startReceiver((request, body, arrivedAt, response) => {
      const event = JSON.parse(body) as { data: { startedAt: string; endedAt: string } };
      receipts.push({
        deliveryId: String(request.headers["service-delivery-id"]),
        startedAt: Date.parse(event.data.startedAt),
        endedAt: Date.parse(event.data.endedAt),
        arrivedAt,
      });
      response.writeHead(204).end();
    });
    const itemApi = await startItemApi();
    // FLOWLOG_TEMPORAL_DEV_DB=memory runs it on an in-memory dev server, as for `flowlog dev`.
    const persistence = process.env.FLOWLOG_TEMPORAL_DEV_DB === "memory" ? "memory" : "file";
    const stack = await benchStack(options, { persistence, workers: "a worker per role" });
    try {
      const workflowId = await createHttpBlockWorkflow(stack, `${itemApi.url}/items/1`);
      const rows: (string | number)[][] = [];
      const unsubscribed = new Map<number, number>();
      let subscriptions = 0;
      let repeats = 0;
      /**
       * One row: `connections` executions in flight for the plan's seconds, then the wait for every
       * delivery of this row's executions, each counted once at its first arrival (a repeat, with the
       * same delivery id, is reported). With `heldBack`, the deliveries worker is stopped during the load
       * and started after it: the deliveries/s is then the backlog's, from that start.
       */
      const measure = async (count: number, connections: number, heldBack = false) => {
        receipts = [];
        if (heldBack) await stack.deliveriesWorker(false);
        const loadStarted = Date.now();
        // An execution of the previous row still in flight when its count settled is delivered later, to
        // this row's subscriptions too; only this row's executions count here, as in allDelivered.
        const ofThisRow = () => receipts.filter((r) => r.startedAt >= loadStarted);
        const load = await executeLoad(stack, workflowId, loadOf(plan, connections));
        const deliveriesFrom = heldBack ? Date.now() : loadStarted;
        if (heldBack) await stack.deliveriesWorker(true);
        const expected = await allDelivered(
          stack,
          loadStarted,
          count,
          () => new Set(ofThisRow().map((r) => r.deliveryId)).size,
          plan,
        );
        const arrivals = ofThisRow();
        const firsts = new Map<string, Receipt>();
        for (const receipt of arrivals)
          if (!firsts.has(receipt.deliveryId)) firsts.set(receipt.deliveryId, receipt);
        receipts = [...firsts.values()];
        repeats += arrivals.length - receipts.length;
        if (receipts.length !== expected) {
          throw new Error(`${receipts.length} deliveries arrived, ${expected} expected (${plan.drainMs} ms)`);
        }
        if (count === 0) unsubscribed.set(connections, load.requestsPerSecond);
        const latency = distribution(receipts.map((r) => r.arrivedAt - r.endedAt));
        const lastArrival = Math.max(...receipts.map((r) => r.arrivedAt));
        const timed = count > 0 && !heldBack;
        rows.push([
          heldBack ? `${count}, deliveries worker stopped` : count,
          connections,
          perSecond(load.requestsPerSecond),
          ratio(load.requestsPerSecond / (unsubscribed.get(connections) ?? Number.NaN)),
          ms(load.latency.p50),
          receipts.length,
          count > 0 ? perSecond((receipts.length * 1000) / (lastArrival - deliveriesFrom)) : "",
          timed ? ms(latency.p50) : "",
          timed ? ms(latency.p99) : "",
          timed ? ms(latency.max) : "",
        ]);
      };
      for (const count of plan.subscriptionCounts) {
        for (; subscriptions < count; subscriptions++) {
          await subscribe(stack, `${webhook.url}/hooks/${subscriptions}`);
        }
        for (const connections of plan.concurrency) await measure(count, connections);
        if (count === 0) rows.push(...(await floorRows(options, plan, stack, workflowId, unsubscribed)));
      }
      // Issue 51: executions with the deliveries' worker stopped, at the most subscriptions and in flight.
      await measure(subscriptions, Math.max(...plan.concurrency), true);
      const baseline = await noopLoad(options, stack.temporalAddress, {
        connections: 8,
        seconds: plan.seconds,
        warmupSeconds: plan.warmupSeconds,
      });
      return [
        {
          title: `delivery: webhooks per execution (sync executions for ${loadLength(plan)} each, one Temporal dev server, its state in ${persistence === "file" ? "a file" : "memory"}, a flowlog worker per role)`,
          columns: [
            "subscriptions",
            "in flight",
            "executions/s",
            "vs 0 subscriptions",
            "execute p50 ms",
            "deliveries",
            "deliveries/s",
            "end→receipt p50 ms",
            "end→receipt p99 ms",
            "end→receipt max ms",
          ],
          rows,
          note:
            "deliveries/s: deliveries received over the time from the load's start to the last arrival. " +
            "end→receipt: arrival at the loopback receiver minus the event's data.endedAt. Executions and " +
            "deliveries run in two `flowlog worker` processes (FLOWLOG_WORKER_ROLES, issue 51); in the row " +
            "with the deliveries worker stopped, it starts once the load ends, and deliveries/s is its " +
            "backlog's, from that start to the last arrival. Baseline on the " +
            `same server: ${perSecond(baseline.requestsPerSecond)} no-op workflows/s (8 in flight); every ` +
            "delivery is an activity of the execution's fan-out workflow (D19 as amended, issue 12). " +
            "Floor rows: no subscription, but for each execution the bench starts a workflow of k no-op " +
            "activities on a no-op worker: the least D19's shape (a workflow per event, an activity per " +
            "delivery) can cost, with no store, HTTP or flowlog code; its ratio bounds what k subscriptions " +
            "can reach on this machine. Their deliveries are those activities, their end→receipt the " +
            "workflow's end after the execution's answer. " +
            `Deliveries counted once each; ${repeats} arrived again with the same delivery id (D19 allows it).`,
        } satisfies Table,
      ];
    } finally {
      await stack.stop();
      await itemApi.close();
      await webhook.close();
    }
  },
};

/**
 * The floor of each subscribed row (issue 12): executions with no subscription while, for each one, the
 * bench starts a no-op fan-out of as many activities as that row has subscriptions. What this costs the
 * executions is what the shape alone costs, before any delivery work of flowlog's own. The local rows run
 * those no-ops as local activities of the fan-out's one workflow task: the least a notification workflow
 * per event costs, however its deliveries run.
 */
const floorKinds = [
  ["no-op", "noopFanOut"],
  ["local no-op", "noopLocalFanOut"],
] as const;

/** The plan's load at `connections` executions in flight, as every row of this bench runs it. */
function loadOf(plan: Plan, connections: number): LoadPlan {
  const { seconds, warmupSeconds, tickMs, requests, warmupRequests } = plan;
  return { connections, seconds, warmupSeconds, tickMs, requests, warmupRequests };
}

async function floorRows(
  options: BenchOptions,
  plan: Plan,
  stack: FlowlogStack,
  workflowId: string,
  unsubscribed: Map<number, number>,
): Promise<(string | number)[][]> {
  const worker = await noopWorker(options, stack.temporalAddress);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const rows: (string | number)[][] = [];
  try {
    const client = new Client({ connection });
    let next = 0;
    for (const [kind, fanOutWorkflow] of floorKinds) {
      for (const deliveries of plan.subscriptionCounts.filter((count) => count > 0)) {
        for (const connections of plan.concurrency) {
          const latencies: number[] = [];
          const fanOuts: Promise<void>[] = [];
          let lastEnd = 0;
          const loadStarted = Date.now();
          const fanOut = async () => {
            const answeredAt = Date.now();
            const handle = await client.workflow.start<typeof noopFanOut>(fanOutWorkflow, {
              taskQueue: noopTaskQueue,
              workflowId: `bench-floor-${process.pid}-${next++}`,
              args: [deliveries],
            });
            await handle.result();
            lastEnd = Date.now();
            latencies.push(lastEnd - answeredAt);
          };
          const load = await executeLoad(stack, workflowId, loadOf(plan, connections), () =>
            fanOuts.push(fanOut()),
          );
          await Promise.all(fanOuts);
          const latency = distribution(latencies);
          rows.push([
            `floor: ${deliveries} ${kind}`,
            connections,
            perSecond(load.requestsPerSecond),
            ratio(load.requestsPerSecond / (unsubscribed.get(connections) ?? Number.NaN)),
            ms(load.latency.p50),
            fanOuts.length * deliveries,
            perSecond((fanOuts.length * deliveries * 1000) / (lastEnd - loadStarted)),
            ms(latency.p50),
            ms(latency.p99),
            ms(latency.max),
          ]);
        }
      }
    }
  } finally {
    await connection.close();
    await worker.stop();
  }
  return rows;
}

async function subscribe(stack: FlowlogStack, url: string): Promise<void> {
  await stack.post(`/api/v1/workspaces/${stack.workspaceId}/notifications`, {
    channel: "webhook",
    webhook: { url },
    allWorkflows: true,
  });
}

/**
 * Waits until every execution since `since` (the check and the warm-up included) has its `perExecution`
 * deliveries. Executions still in flight when the load generator stopped finish later, so the count of
 * executions is read again on each look, and the wait ends once both counts hold still and agree.
 */
async function allDelivered(
  stack: FlowlogStack,
  since: number,
  perExecution: number,
  received: () => number,
  plan: Pick<Plan, "drainMs" | "lookMs">,
): Promise<number> {
  const until = Date.now() + plan.drainMs;
  let previous = -1;
  for (;;) {
    const expected = (await executionsSince(stack, since)) * perExecution;
    if ((expected === received() && expected === previous) || Date.now() > until) return expected;
    previous = expected;
    await sleep(plan.lookMs);
  }
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
