import { setTimeout as sleep } from "node:timers/promises";
import { Client, Connection } from "@temporalio/client";
import { sampleCompletionEvent } from "../src/notifications/event.js";
import { sendWebhookAttempt } from "../src/notifications/http-channel.js";
import { openStore, type Store } from "../src/store/store.js";
import { deliveryTaskQueue } from "../src/temporal/delivery-ids.js";
import { watchFailingEndpoint } from "../src/temporal/start-endpoint-watch.js";
import { FLOWLOG_TASK_QUEUE } from "../src/temporal/task-queue.js";
import { newId } from "../src/util/ids.js";
import { executeLoad } from "./execution.js";
import { benchStack, createHttpBlockWorkflow, type DevServerStack } from "./support/flowlog-stack.js";
import { loadLength, quickTickMs } from "./support/load.js";
import { startItemApi, startReceiver } from "./support/receiver.js";
import { type Bench, type BenchOptions, ms, perSecond, ratio, type Table } from "./support/report.js";
import { distribution } from "./support/sample.js";

interface Plan {
  /** Held deliveries of the unthrottled row and its floor. */
  held: number;
  /** Held deliveries of the throttled row with no other load. */
  heldPaced: number;
  /** The throttled rows' pace (D38). */
  throttle: number;
  /** Held deliveries of the throttled row that measures the other subscription and the executions. */
  heldThrottled: number;
  /** Seconds of execution load, with and without a drain. */
  seconds: number;
  warmupSeconds: number;
  /** The loads' LoadPlan.tickMs, requests and warmupRequests. */
  tickMs?: number;
  requests?: number;
  warmupRequests?: number;
  /** How long after a load its executions' deliveries to the other subscription are counted. */
  receiptsMs: number;
}

const plans: Record<"quick" | "full", Plan> = {
  quick: {
    held: 100,
    heldPaced: 25,
    throttle: 50,
    // About as long as the load beside it (warm-up, load, receipts) at the throttle.
    heldThrottled: 50,
    seconds: 1,
    warmupSeconds: 0.25,
    tickMs: quickTickMs,
    requests: 2,
    warmupRequests: 0,
    receiptsMs: 250,
  },
  full: {
    held: 10_000,
    heldPaced: 10_000,
    throttle: 50,
    heldThrottled: 2_000,
    seconds: 15,
    warmupSeconds: 0.5,
    receiptsMs: 1_000,
  },
};

const secret = "bench-outage-secret-0123456789abcdef";

/**
 * Issue 51's drain goals (D36): an endpoint held through an outage, its held deliveries drained once a
 * probe gets through, unthrottled against a floor that posts the same signed bodies to the same receiver
 * one at a time (no store, no Temporal), and at a throttle of 50/s; while the throttled drain runs, the
 * executions' rate at 8 in flight and another subscription's end→receipt, against the same load with no
 * drain. The held deliveries are written to the store as the hold leaves them (three exhausted, the rest
 * made held); the probe is skipped (the endpoint is released as its first 2xx releases it), so the row
 * times the drain itself, from the watcher's start to the last arrival.
 */
export const outageBench: Bench = {
  name: "outage",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const arrivals = new Map<string, { first: number; count: number }>();
    /** The deliveries the running drain has yet to deliver: the receiver counts them down. */
    let awaited = new Set<string>();
    const receipts: { endedAt: number; arrivedAt: number }[] = [];
    const hook = await startReceiver((request, body, arrivedAt, response) => {
      if (request.url?.startsWith("/other")) {
        const event = JSON.parse(body) as { data: { endedAt: string } };
        receipts.push({ endedAt: Date.parse(event.data.endedAt), arrivedAt });
      } else {
        const id = String(request.headers["service-delivery-id"]);
        const seen = arrivals.get(id);
        arrivals.set(id, { first: seen?.first ?? arrivedAt, count: (seen?.count ?? 0) + 1 });
        awaited.delete(id);
      }
      response.writeHead(204).end();
    });
    const itemApi = await startItemApi();
    const stack = await benchStack(options, { workers: "a worker per role" });
    const store = openStore({ dataDir: stack.dataDir });
    const connection = await Connection.connect({ address: stack.temporalAddress });
    const temporal = new Client({ connection });
    try {
      const loadWorkflow = await createHttpBlockWorkflow(stack, `${itemApi.url}/items/1`);
      const quietWorkflow = await createHttpBlockWorkflow(stack, `${itemApi.url}/items/1`);
      const drain = async (count: number, throttle?: number) => {
        const id = await heldSubscription(stack, store, `${hook.url}/held`, quietWorkflow, count, throttle);
        const ids = new Set((await store.holds.oldestHeld(id, count)).map((held) => held.id));
        awaited = new Set(ids);
        const started = Date.now();
        await watchFailingEndpoint(
          temporal,
          { subscriptionId: id, workspaceId: stack.workspaceId },
          deliveryTaskQueue(FLOWLOG_TASK_QUEUE),
        );
        const done = (async () => {
          // A look at a count, not at every id: the receiver shares the bench's process.
          while (awaited.size > 0) await sleep(50);
          const last = Math.max(...[...ids].map((deliveryId) => arrivals.get(deliveryId)?.first ?? 0));
          const twice = [...ids].filter((deliveryId) => (arrivals.get(deliveryId)?.count ?? 0) > 1).length;
          return { perSecond: (ids.size * 1000) / (last - started), twice };
        })();
        return { id, done };
      };

      const unthrottled = await drain(plan.held);
      const drained = await unthrottled.done;
      const floor = await floorRate(store, unthrottled.id, `${hook.url}/floor`, plan.held);
      const paced = await drain(plan.heldPaced, plan.throttle);
      const pacedDrained = await paced.done;

      // The other subscription's deliveries and the executions, with no drain, then during one.
      await stack.post(`/api/v1/workspaces/${stack.workspaceId}/notifications`, {
        channel: "webhook",
        webhook: { url: `${hook.url}/other` },
        workflowIds: [loadWorkflow],
      });
      const loaded = async () => {
        receipts.length = 0;
        const load = await executeLoad(stack, loadWorkflow, {
          connections: 8,
          seconds: plan.seconds,
          warmupSeconds: plan.warmupSeconds,
          tickMs: plan.tickMs,
          requests: plan.requests,
          warmupRequests: plan.warmupRequests,
        });
        await sleep(plan.receiptsMs);
        return { load, latency: distribution(receipts.map((r) => r.arrivedAt - r.endedAt)) };
      };
      const quiet = await loaded();
      const during = await drain(plan.heldThrottled, plan.throttle);
      const busy = await loaded();
      const duringDrained = await during.done;

      const rows: (string | number)[][] = [
        [
          "drain, unthrottled",
          plan.held,
          perSecond(drained.perSecond),
          ratio(drained.perSecond / floor),
          drained.twice,
        ],
        ["floor: the same bodies posted one at a time", plan.held, perSecond(floor), "1.00x", 0],
        [
          `drain at ${plan.throttle}/s`,
          plan.heldPaced,
          perSecond(pacedDrained.perSecond),
          ratio(pacedDrained.perSecond / plan.throttle),
          pacedDrained.twice,
        ],
        [
          `drain at ${plan.throttle}/s, under execution load`,
          plan.heldThrottled,
          perSecond(duringDrained.perSecond),
          ratio(duringDrained.perSecond / plan.throttle),
          duringDrained.twice,
        ],
      ];
      const loadRows: (string | number)[][] = [
        [
          "no drain",
          perSecond(quiet.load.requestsPerSecond),
          "1.00x",
          ms(quiet.latency.p50),
          ms(quiet.latency.p99),
        ],
        [
          `during a drain at ${plan.throttle}/s`,
          perSecond(busy.load.requestsPerSecond),
          ratio(busy.load.requestsPerSecond / quiet.load.requestsPerSecond),
          ms(busy.latency.p50),
          ms(busy.latency.p99),
        ],
      ];
      return [
        {
          title: `outage: held deliveries drained (D36), a flowlog worker per role, one Temporal dev server`,
          columns: ["row", "held", "deliveries/s", "vs floor or throttle", "arrived twice"],
          rows,
          note:
            "deliveries/s: held deliveries over the time from the watcher's start to the last first arrival. " +
            "The floor posts the same signed bodies to the same receiver, one at a time as the drain sends " +
            "them to keep their order, from the bench process: no store, no Temporal. Throttled rows: " +
            "against the throttle. Arrived twice: the same delivery id again (D19 allows it).",
        } satisfies Table,
        {
          title: `outage: executions (8 in flight, ${loadLength(plan)}) and another subscription during a drain`,
          columns: ["load", "executions/s", "vs no drain", "end→receipt p50 ms", "end→receipt p99 ms"],
          rows: loadRows,
          note:
            "end→receipt: arrival of another subscription's delivery at the loopback receiver minus the " +
            "event's data.endedAt. The held subscription selects another workflow, so the load adds nothing " +
            "to its drain.",
        } satisfies Table,
      ];
    } finally {
      await connection.close();
      await store.close();
      await stack.stop();
      await itemApi.close();
      await hook.close();
    }
  },
};

/**
 * A webhook subscription held as three exhausted deliveries hold it, with `count` held deliveries in all,
 * released as a probe's first 2xx releases it: the watcher started next drains at once.
 */
async function heldSubscription(
  stack: DevServerStack,
  store: Store,
  url: string,
  workflowId: string,
  count: number,
  throttle?: number,
): Promise<string> {
  const { subscription } = await stack.post<{ subscription: { id: string } }>(
    `/api/v1/workspaces/${stack.workspaceId}/notifications`,
    {
      channel: "webhook",
      webhook: { url, secret },
      workflowIds: [workflowId],
      ...(throttle === undefined ? {} : { throttlePerSecond: throttle }),
    },
  );
  const t0 = Date.now() - 60_000;
  for (let n = 0; n < count; n++) {
    const eventId = newId("evt");
    const event = sampleCompletionEvent({
      eventId,
      timestampMs: t0 + n,
      include: { finalOutput: true, traceSpans: false, rateLimits: false, usage: false },
    });
    const delivery = await store.deliveries.createOnce({
      id: newId("dlv"),
      eventId,
      eventType: event.type,
      subscriptionId: subscription.id,
      workspaceId: stack.workspaceId,
      logId: null,
      event,
      createdAt: t0 + n,
    });
    if (n < 3) {
      await store.deliveries.recordAttempt(
        {
          deliveryId: delivery.id,
          series: 1,
          attempt: 5,
          startedAt: t0 + n,
          durationMs: 1,
          outcome: "failed",
          httpStatus: 503,
          responseSnippet: null,
          error: "receiver answered 503 Service Unavailable",
        },
        "failed",
        { exhausted: true },
      );
    }
  }
  if (!(await store.holds.release(subscription.id))) throw new Error("the subscription was not held");
  return subscription.id;
}

/** The floor: the held subscription's bodies, signed per attempt as a delivery is, posted one at a time. */
async function floorRate(store: Store, subscriptionId: string, url: string, count: number): Promise<number> {
  const deliveries = await store.deliveries.list(
    { workspaceId: (await store.notifications.get(subscriptionId))?.workspaceId ?? "", subscriptionId },
    count,
  );
  const events = await Promise.all(deliveries.map((d) => store.deliveries.get(d.id)));
  const started = Date.now();
  for (const delivery of events) {
    if (!delivery) continue;
    const result = await sendWebhookAttempt({
      url,
      secret,
      event: delivery.event as Parameters<typeof sendWebhookAttempt>[0]["event"],
      deliveryId: delivery.id,
      allowPrivateNetworks: true,
      replyLimitBytes: 65_536,
    });
    if (result.outcome !== "succeeded") throw new Error(`the floor's post failed: ${result.error}`);
  }
  return (events.length * 1000) / (Date.now() - started);
}
