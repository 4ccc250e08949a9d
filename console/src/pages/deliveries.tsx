import type { Delivery } from "../../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import type { NotificationSubscription } from "../../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { useSession } from "../context.js";
import { DeliveryPage } from "../deliveries-detail.js";
import { formatTime } from "../format.js";
import { navigate, type Route, routeHref } from "../router.js";
import { subscriptionLabel } from "../subscription-text.js";
import { CallError, useCall } from "../use-call.js";

/** ListDeliveries' filters as URL parameters, so a view of the delivery log can be shared. */
const filterParams = ["subscription", "status", "event"] as const;
const statuses = ["pending", "succeeded", "failed"] as const;
/** The API's default page, one more of it per "Show more", up to its largest (ListDeliveriesRequest.limit). */
const pageSize = 100;
const largestPage = 1_000;

/** `#/deliveries` is the delivery log (D19), `#/deliveries/<id>` one delivery with its attempts. */
export function DeliveriesPage({ route }: { route: Route }) {
  return route.id ? <DeliveryPage id={route.id} /> : <DeliveryLog params={route.params} />;
}

function DeliveryLog({ params }: { params: URLSearchParams }) {
  const { api, workspaceId } = useSession();
  const filters = Object.fromEntries(filterParams.map((name) => [name, params.get(name) ?? undefined]));
  const limitParam = params.get("limit");
  // Passed as typed: a limit the API refuses is said with the field it names.
  const limit = limitParam ? Number.parseInt(limitParam, 10) : pageSize;
  const [subscriptions] = useCall(
    (signal) => api.notifications.listSubscriptions({ workspaceId }, { signal }),
    [workspaceId],
  );
  const [page] = useCall(
    (signal) =>
      api.deliveries.listDeliveries(
        {
          workspaceId,
          subscriptionId: filters.subscription,
          status: filters.status,
          eventId: filters.event,
          limit,
        },
        { signal },
      ),
    [workspaceId, params.toString()],
  );
  const show = (next: Record<string, string | undefined>) =>
    navigate(routeHref("deliveries", undefined, { ws: workspaceId, ...next }));
  const deliveries = page.value?.deliveries ?? [];
  const listed = subscriptions.value?.subscriptions ?? [];

  return (
    <section aria-labelledby="deliveries-title">
      <h1 id="deliveries-title">Deliveries</h1>
      <DeliveryFilters params={params} subscriptions={listed} onApply={show} />
      <CallError state={page} />
      <DeliveryTable deliveries={deliveries} subscriptions={listed} busy={page.status === "loading"} />
      <nav class="pager" aria-label="More deliveries">
        <p>
          The newest {deliveries.length} {deliveries.length === 1 ? "delivery" : "deliveries"}
          {deliveries.length < limit ? ", all that match." : "."}
        </p>
        {deliveries.length >= limit && limit < largestPage && (
          <button
            type="button"
            onClick={() => show({ ...filters, limit: String(Math.min(limit + pageSize, largestPage)) })}
          >
            Show more
          </button>
        )}
      </nav>
    </section>
  );
}

function DeliveryFilters({
  params,
  subscriptions,
  onApply,
}: {
  params: URLSearchParams;
  subscriptions: NotificationSubscription[];
  onApply: (filters: Record<string, string | undefined>) => void;
}) {
  const chosen = params.get("subscription") ?? "";
  // A deleted subscription is no longer listed, yet its deliveries stay readable by its id.
  const unlisted = chosen && !subscriptions.some((subscription) => subscription.id === chosen);
  function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    onApply(Object.fromEntries(filterParams.map((name) => [name, String(form.get(name) ?? "").trim()])));
  }
  return (
    <form class="filters" onSubmit={submit} onReset={() => onApply({})} aria-label="Filters">
      <label>
        Subscription
        <select name="subscription" value={chosen}>
          <option value="">any</option>
          {unlisted && <option value={chosen}>{chosen}</option>}
          {subscriptions.map((subscription) => (
            <option key={subscription.id} value={subscription.id}>
              {subscriptionLabel(subscription)}
            </option>
          ))}
        </select>
      </label>
      <label>
        Status
        <select name="status" value={params.get("status") ?? ""}>
          <option value="">any</option>
          {statuses.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </label>
      <label>
        Event id
        <input name="event" value={params.get("event") ?? ""} placeholder="evt_…" />
      </label>
      <div class="actions">
        <button type="submit">Apply filters</button>
        <button type="reset" class="quiet">
          Clear
        </button>
      </div>
    </form>
  );
}

function DeliveryTable({
  deliveries,
  subscriptions,
  busy,
}: {
  deliveries: Delivery[];
  subscriptions: NotificationSubscription[];
  busy: boolean;
}) {
  const { workspaceId } = useSession();
  const labels = new Map(
    subscriptions.map((subscription) => [subscription.id, subscriptionLabel(subscription)]),
  );
  return (
    <table class="deliveries" aria-busy={busy}>
      <caption class="visually-hidden">Deliveries, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Created</th>
          <th scope="col">Status</th>
          <th scope="col">Event</th>
          <th scope="col">Subscription</th>
          <th scope="col" class="number">
            Attempts
          </th>
          <th scope="col">Last error</th>
          <th scope="col">Log entry</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.length === 0 && !busy && (
          <tr>
            <td colSpan={7}>No deliveries match.</td>
          </tr>
        )}
        {deliveries.map((delivery) => (
          <tr key={delivery.id}>
            <td>
              <a
                href={routeHref("deliveries", delivery.id, { ws: workspaceId })}
                title={`${delivery.id}, created ${delivery.createdAt}`}
              >
                {formatTime(delivery.createdAt)}
              </a>
            </td>
            <td>
              <span class={`status ${delivery.status}`}>{delivery.status}</span>
            </td>
            <td>{delivery.eventType}</td>
            <td class="target">
              <a href={routeHref("subscriptions", delivery.subscriptionId, { ws: workspaceId })}>
                {labels.get(delivery.subscriptionId) ?? delivery.subscriptionId}
              </a>
            </td>
            <td class="number">{delivery.attemptCount}</td>
            <td>{delivery.lastError ?? "–"}</td>
            <td>
              {delivery.logId ? (
                <a href={routeHref("logs", delivery.logId, { ws: workspaceId })}>
                  <code>{delivery.logId}</code>
                </a>
              ) : (
                "–"
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
