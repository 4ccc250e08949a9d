import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { Client } from "@temporalio/client";
import type {
  NotificationSubscription,
  NotificationsService,
} from "../../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { invalidArgument, preconditionFailed, quotaReached } from "../../errors/api-errors.js";
import type { Quotas } from "../../limits/quotas.js";
import { newStandardSecret, standardSecretProblem } from "../../notifications/standard-webhooks.js";
import { newSecretToken } from "../../security/tokens.js";
import type { Store } from "../../store/store.js";
import type { SubscriptionRecord } from "../../store/subscriptions-store.js";
import { ensureInactivityWatchers } from "../../temporal/start-inactivity-watch.js";
import { newId } from "../../util/ids.js";
import { callerOf } from "../caller.js";
import { requireMember } from "../workspace-access.js";
import { resolveSettings } from "./subscription-settings.js";
import { subscriptionView } from "./subscription-view.js";

export interface SubscriptionsServiceDependencies {
  store: Store;
  clock: () => number;
  /** Where the no-activity watchers run (D21). */
  temporal: { client: Client; taskQueue?: string | undefined };
  /** Subscriptions per workspace and values per list (D26). */
  quotas: Pick<Quotas, "listParameterValues" | "workspace">;
}

/** D33: the replaced secret signs for 24 h unless the request says otherwise (at most 7 days, in the .proto). */
const defaultGracePeriodSeconds = 86_400;

type Handlers = Partial<ServiceImpl<typeof NotificationsService>>;

/**
 * Notification subscriptions of a workspace (D18). Every call needs a member of the workspace in the
 * path (403 otherwise, D10); a subscription of another workspace is 404, like one that does not exist.
 */
export function createSubscriptionsService({
  store,
  clock,
  temporal,
  quotas,
}: SubscriptionsServiceDependencies): Handlers {
  const subscriptions = store.notifications;
  const view = async (subscription: SubscriptionRecord) =>
    subscriptionView(
      subscription,
      await store.alerts.states(subscription.id),
      clock(),
      // D36: counted only while there is a hold.
      subscription.heldAt === null ? 0 : await store.holds.heldCount(subscription.id),
    );
  /** D21: a no_activity rule is checked by time, so saving or enabling one makes sure its watchers run. */
  const watched = async (subscription: SubscriptionRecord) => {
    await ensureInactivityWatchers(temporal, store, subscription, clock());
    return view(subscription);
  };

  /** A live subscription of the workspace, or 404: also when it was deleted between two statements. */
  const found = (workspaceId: string, id: string, subscription: SubscriptionRecord | undefined) => {
    if (subscription?.workspaceId !== workspaceId)
      throw new ConnectError(`subscription ${id} not found`, Code.NotFound);
    return subscription;
  };
  // Read at the service's time, which decides when a rotation's grace period has ended (D33).
  const visible = async (workspaceId: string, id: string) =>
    found(workspaceId, id, await subscriptions.get(id, clock()));

  const setActive =
    (active: boolean) => async (request: { workspaceId: string; id: string }, context: HandlerContext) => {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      const current = await visible(request.workspaceId, request.id);
      const changed = await subscriptions.setActive(current.id, active, clock());
      return { subscription: await watched(found(request.workspaceId, request.id, changed)) };
    };

  /** The named workflows that are live in the workspace; past the list limit none is read (D26). */
  const liveWorkflows = async (workspaceId: string, ids: string[]): Promise<ReadonlySet<string>> => {
    // resolveSettings refuses a list over the limit whole, before asking about any of its values.
    if (ids.length > quotas.listParameterValues) return new Set();
    const found = await Promise.all([...new Set(ids)].map((id) => store.workflows.getWorkflow(id)));
    return new Set(
      found.flatMap((w) => (w?.workspaceId === workspaceId && w.deletedAt === null ? [w.id] : [])),
    );
  };

  const resolve = async (
    workspaceId: string,
    input: NotificationSubscription | undefined,
    current?: SubscriptionRecord,
    replaced: ReadonlySet<string> = new Set(),
  ) => {
    const live = await liveWorkflows(workspaceId, input?.workflowIds ?? []);
    // The validation interceptor has refused a request without a subscription.
    return resolveSettings(
      input as NotificationSubscription,
      current,
      (workflowId) => live.has(workflowId),
      quotas.listParameterValues,
      replaced,
    );
  };

  return {
    async createSubscription(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      const { settings, secret, headers, generatedSecret } = await resolve(
        request.workspaceId,
        request.subscription,
      );
      const max = quotas.workspace.subscriptions;
      const created = await subscriptions.create(
        { id: newId("sub"), workspaceId: request.workspaceId, createdAt: clock(), ...settings },
        secret ?? null,
        max,
        headers,
      );
      if ("full" in created) {
        const holder = `workspace ${request.workspaceId}`;
        throw quotaReached({
          quota: "workspace.subscriptions",
          holder,
          counted: "subscriptions",
          count: created.full,
          max,
        });
      }
      return { subscription: await watched(created.created), secret: generatedSecret };
    },

    async getSubscription(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      return { subscription: await view(await visible(request.workspaceId, request.id)) };
    },

    async listSubscriptions(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      const listed = await subscriptions.list(request.workspaceId, clock());
      return { subscriptions: await Promise.all(listed.map(view)) };
    },

    async updateSubscription(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      const current = await visible(request.workspaceId, request.id);
      const { settings, secret, headers, generatedSecret } = await resolve(
        request.workspaceId,
        request.subscription,
        current,
        new Set(request.updateMask?.paths),
      );
      const updated = await subscriptions.update(current.id, settings, secret, clock(), headers);
      return {
        subscription: await watched(found(request.workspaceId, request.id, updated)),
        secret: generatedSecret,
      };
    },

    async deleteSubscription(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      await subscriptions.delete((await visible(request.workspaceId, request.id)).id, clock());
      return {};
    },

    enableSubscription: setActive(true),
    disableSubscription: setActive(false),

    /**
     * D33: a new webhook secret, given or generated (shown in this answer only), while the current one
     * keeps signing beside it for the grace period. A webhook without a secret simply gets one. Its bounds
     * are declared in the .proto; only a webhook has a secret to rotate, and a standard one's is a whsec_
     * key (D39).
     */
    async rotateSecret(request, context) {
      await requireMember(store, callerOf(context.values), request.workspaceId);
      const current = await visible(request.workspaceId, request.id);
      const { channel } = current.config;
      if (channel !== "webhook")
        throw preconditionFailed({
          type: "CHANNEL",
          subject: `subscription ${current.id}`,
          description: `subscription ${current.id} is a ${channel} subscription; only a webhook has a signing secret to rotate (D33)`,
        });
      const standard = current.config.channel === "webhook" && current.config.signatureScheme === "standard";
      const problem = standard && request.secret !== undefined && standardSecretProblem(request.secret);
      if (problem) throw invalidArgument([{ field: "secret", message: `secret ${problem}` }]);
      const generatedSecret =
        request.secret !== undefined ? undefined : standard ? newStandardSecret() : newSecretToken("whsec");
      const now = clock();
      const graceMs = (request.gracePeriodSeconds ?? defaultGracePeriodSeconds) * 1000;
      const rotated = await subscriptions.rotateSecret(
        current.id,
        request.secret ?? (generatedSecret as string),
        graceMs === 0 ? null : now + graceMs,
        now,
      );
      return {
        subscription: await view(found(request.workspaceId, request.id, rotated)),
        secret: generatedSecret,
      };
    },
  };
}
