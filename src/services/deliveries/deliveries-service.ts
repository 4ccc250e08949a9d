import { fromJson, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { Client } from "@temporalio/client";
import type {
  DeliveriesService,
  DeliveryAttemptSchema,
  DeliverySchema,
  GetDeliveryRequest,
} from "../../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import { completionEventType } from "../../domain/event-types.js";
import { invalidArgument, preconditionFailed } from "../../errors/api-errors.js";
import {
  defaultAttemptsPageSize,
  maxDeliverySeries,
  maxRedeliveries,
  takeTestSend,
  testSendLimit,
} from "../../limits/delivery-limits.js";
import { computeLimits } from "../../limits/execution-limits.js";
import type { PlanTable } from "../../limits/plans.js";
import type { Quotas } from "../../limits/quotas.js";
import { currentTraceCarrier } from "../../logging/tracing.js";
import { sampleCompletionEvent } from "../../notifications/event.js";
import type {
  AttemptKey,
  DeliveryAttemptRecord,
  DeliveryRecord,
  Reopening,
} from "../../store/delivery-rows.js";
import type { Store } from "../../store/store.js";
import type { DeliveryInput } from "../../temporal/activities/delivery-activities.js";
import {
  type DeliveryTarget,
  deliverySearchAttributes,
  deliveryTaskQueue,
  redeliveryWorkflowId,
  testDeliveryWorkflowId,
} from "../../temporal/delivery-ids.js";
import { FLOWLOG_TASK_QUEUE } from "../../temporal/task-queue.js";
// A type only: the API server never loads workflow code.
import type { deliverNotification } from "../../temporal/workflows/index.js";
import { workspacePriority } from "../../temporal/workspace-priority.js";
import { newId } from "../../util/ids.js";
import { isoFromMs } from "../../util/time.js";
import { callerOf } from "../caller.js";
import { type Member, requireMember, visibleTo } from "../workspace-access.js";
import { decodeAttemptsCursor, encodeAttemptsCursor } from "./attempts-cursor.js";
import { encodeDeliveriesCursor } from "./deliveries-cursor.js";
import { parseListDeliveries } from "./list-deliveries-request.js";
import { createRecoveryService } from "./recovery-service.js";

export interface DeliveriesServiceDependencies {
  store: Store;
  /** What the Test RPC's sample event reports as limits (D12). */
  planLimits: PlanTable;
  temporal: Client;
  /** D26's table, for the bound of a recovery job (D37); the defaults when unset. */
  quotas?: Quotas | undefined;
  /** Tests run workers on their own task queues. */
  taskQueue?: string | undefined;
  clock: () => number;
}

/**
 * The delivery log (issue 5, item 7), redelivery and the Test RPC (D18, D19). The sending itself is the
 * delivery workflow's, on the worker: this service only reads the log and starts attempt series.
 */
export function createDeliveriesService(
  deps: DeliveriesServiceDependencies,
): Partial<ServiceImpl<typeof DeliveriesService>> {
  const { store, clock } = deps;
  const visibleDelivery = async (member: Member, id: string) =>
    await visibleTo(store, member, await store.deliveries.get(id), (d) => d.workspaceId, `delivery ${id}`);

  // D50: a redelivery's or test send's attempts are the children of the RPC's span, whose context travels
  // in the series' input.
  const traced = (input: DeliveryInput): DeliveryInput => {
    const traceContext = currentTraceCarrier();
    return traceContext ? { ...input, traceContext } : input;
  };
  const startSeries = (target: DeliveryTarget, input: DeliveryInput) =>
    deps.temporal.workflow.start<typeof deliverNotification>("deliverNotification", {
      workflowId: input.once
        ? testDeliveryWorkflowId(input.deliveryId)
        : redeliveryWorkflowId(input.deliveryId, input.series),
      taskQueue: deliveryTaskQueue(deps.taskQueue ?? FLOWLOG_TASK_QUEUE),
      args: [traced(input)],
      workflowIdReusePolicy: "REJECT_DUPLICATE",
      typedSearchAttributes: deliverySearchAttributes(target),
      priority: workspacePriority(target.workspaceId),
    });

  return {
    ...createRecoveryService(deps),

    async listDeliveries(request, context) {
      const caller = callerOf(context.values);
      const { filter, limit } = parseListDeliveries(request);
      await requireMember(store, caller, request.workspaceId);
      // One more than asked for tells whether older deliveries remain.
      const listed = await store.deliveries.list(filter, limit + 1, context.signal);
      const page = listed.slice(0, limit);
      const last = page.at(-1);
      return {
        deliveries: page.map(deliveryView),
        ...(listed.length > limit && last ? { nextCursor: encodeDeliveriesCursor(last) } : {}),
      };
    },

    async getDelivery(request, context) {
      const caller = callerOf(context.values);
      // Validation (D28) before the delivery is looked at: a bad cursor is 400 whoever's it is.
      const { limit, before } = parseAttemptsPage(request);
      const delivery = await visibleDelivery(caller, request.id);
      // One more than asked for tells whether older attempts remain.
      const newest = await store.deliveries.newestAttempts(delivery.id, limit + 1, before);
      const page = newest.slice(0, limit);
      const oldest = page.at(-1);
      return {
        delivery: deliveryView(delivery),
        event: fromJson(ValueSchema, delivery.event as JsonValue),
        attempts: page.reverse().map(attemptView),
        ...(newest.length > limit && oldest
          ? { nextAttemptsCursor: encodeAttemptsCursor(delivery.id, oldest) }
          : {}),
      };
    },

    async redeliver(request, context) {
      const delivery = await visibleDelivery(callerOf(context.values), request.id);
      const reopened = await store.deliveries.reopen(delivery.id, clock(), maxDeliverySeries);
      if (!reopened || "refused" in reopened) throw redeliveryRefused(delivery.id, reopened);
      const { series } = reopened;
      const workflowId =
        delivery.logId === null ? undefined : (await store.logs.getEntry(delivery.logId))?.workflowId;
      await startSeries(
        { ...delivery, deliveryId: delivery.id, workflowId },
        { deliveryId: delivery.id, series },
      );
      return { delivery: deliveryView((await store.deliveries.get(delivery.id)) ?? delivery), series };
    },

    async testSubscription(request, context) {
      const caller = callerOf(context.values);
      const { user } = caller;
      await requireMember(store, caller, request.workspaceId);
      const now = clock();
      const subscription = await store.notifications.get(request.id, now);
      if (subscription?.workspaceId !== request.workspaceId)
        throw new ConnectError(`subscription ${request.id} not found`, Code.NotFound);
      const taken = await takeTestSend(store, subscription.id, now);
      if (!taken.allowed) {
        throw new ConnectError(
          `subscription ${subscription.id} may be tested at most ${testSendLimit.requestsPerMinute} times ` +
            `a minute (D40); retry after ${taken.retryAfterSeconds} s`,
          Code.ResourceExhausted,
          { "Retry-After": String(taken.retryAfterSeconds) },
        );
      }
      // The sample marks itself as a test through its identifiers (`*_test_*`); so does its event id.
      const event = sampleCompletionEvent({
        eventId: newId("evt").replace(/^evt_/, "evt_test_"),
        timestampMs: now,
        include: subscription.include,
        limits: await computeLimits(store, deps.planLimits, user, now),
      });
      const delivery = await store.deliveries.createOnce({
        id: newId("dlv"),
        eventId: event.id,
        eventType: completionEventType,
        subscriptionId: subscription.id,
        workspaceId: subscription.workspaceId,
        logId: null,
        event,
        createdAt: now,
        // D36: a test goes now, held endpoint or not: it is how an owner checks the endpoint is back.
        holdable: false,
      });
      const target = {
        deliveryId: delivery.id,
        workspaceId: delivery.workspaceId,
        subscriptionId: subscription.id,
      };
      const handle = await startSeries(target, { deliveryId: delivery.id, series: 1, once: true });
      await handle.result();
      const [attempt] = await store.deliveries.newestAttempts(delivery.id, 1);
      return { deliveryId: delivery.id, ...(attempt ? { attempt: attemptView(attempt) } : {}) };
    },
  };
}

/**
 * Why a delivery opened no new series: one still running (D19), or the 20 redeliveries it may have had
 * (D40). A delivery gone since it was read is still running as far as its caller can tell.
 */
function redeliveryRefused(deliveryId: string, reopened: Exclude<Reopening, { series: number }> | undefined) {
  if (reopened?.refused === "series_limit") {
    return preconditionFailed({
      type: "REDELIVERY_LIMIT",
      subject: `delivery ${deliveryId}`,
      description:
        `delivery ${deliveryId} has been redelivered ${reopened.lastSeries - 1} times, the most allowed is ` +
        `${maxRedeliveries} (D40)`,
    });
  }
  return new ConnectError(
    `delivery ${deliveryId} is still being delivered; redeliver it once it has succeeded or failed`,
    Code.FailedPrecondition,
  );
}

/**
 * The page of attempts GetDelivery asks for (D40). The limit's range is declared in the .proto; what is
 * left is a cursor this API issued for this same delivery.
 */
function parseAttemptsPage(request: GetDeliveryRequest): { limit: number; before?: AttemptKey } {
  const limit = request.attemptsLimit ?? defaultAttemptsPageSize;
  if (request.attemptsCursor === undefined) return { limit };
  const cursor = decodeAttemptsCursor(request.attemptsCursor);
  if (!cursor.ok || cursor.deliveryId !== request.id) {
    throw invalidArgument([
      {
        field: "attemptsCursor",
        message: cursor.ok
          ? `attemptsCursor was issued for delivery ${cursor.deliveryId}, not ${request.id}`
          : "attemptsCursor is not a nextAttemptsCursor this API returned",
      },
    ]);
  }
  return { limit, before: cursor.before };
}

function deliveryView(delivery: DeliveryRecord): MessageInitShape<typeof DeliverySchema> {
  return {
    id: delivery.id,
    workspaceId: delivery.workspaceId,
    subscriptionId: delivery.subscriptionId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    logId: delivery.logId ?? undefined,
    status: delivery.status,
    attemptCount: delivery.attempts,
    lastError: delivery.lastError ?? undefined,
    lastHttpStatus: delivery.lastHttpStatus ?? undefined,
    createdAt: isoFromMs(delivery.createdAt),
    updatedAt: isoFromMs(delivery.updatedAt),
  };
}

function attemptView(attempt: DeliveryAttemptRecord): MessageInitShape<typeof DeliveryAttemptSchema> {
  return {
    series: attempt.series,
    attempt: attempt.attempt,
    startedAt: isoFromMs(attempt.startedAt),
    durationMs: attempt.durationMs,
    outcome: attempt.outcome,
    httpStatus: attempt.httpStatus ?? undefined,
    responseSnippet: attempt.responseSnippet ?? undefined,
    error: attempt.error ?? undefined,
  };
}
