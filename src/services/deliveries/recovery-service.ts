import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { type Client, isGrpcServiceError, ServiceError } from "@temporalio/client";
import type {
  DeliveriesService,
  RecoverDeliveriesRequest,
  RecoverySchema,
} from "../../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import { type FieldViolation, invalidArgument, preconditionFailed } from "../../errors/api-errors.js";
import { defaultQuotas, type Quotas } from "../../limits/quotas.js";
import type { RecoveryWindow } from "../../store/delivery-rows.js";
import type { Store } from "../../store/store.js";
import type { SubscriptionRecord } from "../../store/subscriptions-store.js";
import type { RecoveryState } from "../../temporal/recovery-ids.js";
import { type RecoveryJob, recoveryJobs } from "../../temporal/recovery-jobs.js";
import { FLOWLOG_TASK_QUEUE } from "../../temporal/task-queue.js";
import { isoFromMs } from "../../util/time.js";
import { callerOf } from "../caller.js";
import { isoDate } from "../logs/entry-filter.js";
import { requireMember } from "../workspace-access.js";

type RecoveryRpcs = Pick<
  ServiceImpl<typeof DeliveriesService>,
  "recoverDeliveries" | "getRecovery" | "cancelRecovery"
>;

export interface RecoveryServiceDependencies {
  store: Store;
  temporal: Client;
  /** The executions' queue the deliveries' is named from; tests run workers on their own. */
  taskQueue?: string | undefined;
  clock: () => number;
  /** D26's table; `recoveryDeliveries` bounds a job (D37). */
  quotas?: Quotas | undefined;
}

/**
 * D37: a subscription's failed deliveries sent again by one durable job, which Temporal runs and keeps
 * (temporal/recovery-jobs.ts); here the window is read, the caller and the subscription are checked, and
 * the job's state is answered in the API's words.
 */
export function createRecoveryService(deps: RecoveryServiceDependencies): RecoveryRpcs {
  const { store, clock } = deps;
  const maxDeliveries = (deps.quotas ?? defaultQuotas).recoveryDeliveries;
  const jobs = recoveryJobs(deps.temporal, deps.taskQueue ?? FLOWLOG_TASK_QUEUE);

  /** The caller's subscription of the workspace, as Redeliver's delivery is (D18, D10). */
  const subscriptionOf = async (
    request: { workspaceId: string; id: string },
    context: HandlerContext,
  ): Promise<SubscriptionRecord> => {
    await requireMember(store, callerOf(context.values), request.workspaceId);
    const subscription = await store.notifications.get(request.id, clock());
    if (subscription?.workspaceId !== request.workspaceId)
      throw new ConnectError(`subscription ${request.id} not found`, Code.NotFound);
    return subscription;
  };

  /** A running job's progress is its worker's answer: none in time is unavailable, naming the job. */
  const progressOf = async (job: RecoveryJob): Promise<RecoveryState> => {
    try {
      return await jobs.progress(job);
    } catch (error) {
      if (!(error instanceof ServiceError || isGrpcServiceError(error))) throw error;
      throw new ConnectError(
        `the progress of ${job.handle.workflowId} could not be read: no worker of the deliveries' queue ` +
          "answered in time; it goes on once one runs",
        Code.Unavailable,
      );
    }
  };

  return {
    async recoverDeliveries(request, context) {
      // Validation first (D28): a bad window is 400 whoever's subscription it names.
      const window = recoveryWindowOf(request, clock());
      const subscription = await subscriptionOf(request, context);
      if (!subscription.active) throw subscriptionDisabled(subscription.id);
      const scope = { ...window, subscriptionId: subscription.id };
      // One more than a job takes tells whether more remain.
      const counted = await store.deliveries.countFailed(scope, maxDeliveries + 1);
      const failed = Math.min(counted, maxDeliveries);
      const beyondLimit = counted > maxDeliveries;
      if (request.preview) return { failed, beyondLimit };
      const input = {
        ...scope,
        workspaceId: subscription.workspaceId,
        total: failed,
        capped: beyondLimit,
        startedAt: clock(),
      };
      const start = await jobs.start(input);
      if ("running" in start) throw jobRunning(subscription.id, start.running);
      // As the job stands at its start: no worker need have run it yet.
      const state = { ...input, status: "running", succeeded: 0, failed: 0, skipped: 0 } as const;
      return { failed, beyondLimit, recovery: recoveryView(start.started, state) };
    },

    async getRecovery(request, context) {
      const subscription = await subscriptionOf(request, context);
      const job = await jobs.newest(subscription.id);
      return job ? { recovery: recoveryView(job, await progressOf(job)) } : {};
    },

    async cancelRecovery(request, context) {
      const subscription = await subscriptionOf(request, context);
      const job = await jobs.newest(subscription.id);
      if (!job?.running) {
        throw preconditionFailed({
          type: "RECOVERY_NOT_RUNNING",
          subject: `subscription ${subscription.id}`,
          description: `subscription ${subscription.id} has no recovery job running`,
        });
      }
      await jobs.cancel(job);
      return { recovery: recoveryView(job, await progressOf(job)) };
    },
  };
}

/**
 * The window of a recovery (D37): the .proto holds since and until to ISO 8601 on the calendar; what is
 * left is that Date reads them and that until is not before since. Until defaults to now.
 */
function recoveryWindowOf(
  request: RecoverDeliveriesRequest,
  now: number,
): Omit<RecoveryWindow, "subscriptionId"> {
  const violations: FieldViolation[] = [];
  const fail = (field: string, message: string) => violations.push({ field, message });
  const since = isoDate(request.since, "since", fail);
  const until = isoDate(request.until, "until", fail) ?? now;
  if (since !== undefined && until < since) fail("until", `until (${isoFromMs(until)}) is before since`);
  if (violations.length > 0 || since === undefined) throw invalidArgument(violations);
  return { since, until };
}

function subscriptionDisabled(subscriptionId: string): ConnectError {
  return preconditionFailed({
    type: "SUBSCRIPTION_DISABLED",
    subject: `subscription ${subscriptionId}`,
    description:
      `subscription ${subscriptionId} is disabled, so its deliveries cannot be recovered; enable it ` +
      `(POST …/notifications/${subscriptionId}:enable) and recover them then`,
  });
}

function jobRunning(subscriptionId: string, workflowId: string): ConnectError {
  return preconditionFailed({
    type: "RECOVERY_RUNNING",
    subject: `subscription ${subscriptionId}`,
    description:
      `subscription ${subscriptionId} has a recovery job running (${workflowId}); wait for it to end or ` +
      "cancel it before starting another (D37)",
  });
}

function recoveryView(job: RecoveryJob, state: RecoveryState): MessageInitShape<typeof RecoverySchema> {
  return {
    id: job.handle.workflowId,
    subscriptionId: state.subscriptionId,
    since: isoFromMs(state.since),
    until: isoFromMs(state.until),
    status: state.status,
    total: state.total,
    done: state.succeeded + state.failed + state.skipped,
    succeeded: state.succeeded,
    failed: state.failed,
    skipped: state.skipped,
    capped: state.capped,
    startedAt: isoFromMs(state.startedAt),
    endedAt: state.endedAt === undefined ? undefined : isoFromMs(state.endedAt),
    stoppedReason: state.stoppedReason,
  };
}
