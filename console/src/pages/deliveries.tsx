import type { Delivery } from "../../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import type { NotificationSubscription } from "../../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { useSession } from "../context.js";
import { DeliveryPage } from "../deliveries-detail.js";
import { formatTime } from "../format.js";
import { KeysetPager, newestFirstLabels } from "../keyset-pager.js";
import { isoToLocalInput, localInputToIso } from "../log-filters.js";
import { navigate, type Route, routeHref } from "../router.js";
import { subscriptionLabel } from "../subscription-text.js";
import { CallError, useCall } from "../use-call.js";

/** ListDeliveries' filters as URL parameters (D40), so a view of the delivery log can be shared. */
const filterParams = ["subscription", "status", "type", "class", "from", "to", "event"] as const;
const statuses = ["pending", "held", "succeeded", "failed"] as const;
const statusClasses = ["2xx", "3xx", "4xx", "5xx", "none"] as const;
/** The types flowlog sends, offered as the event type filter's suggestions; any other can be typed. */
const eventTypes = [
  "workflow.execution.completed",
  "workflow.alert.fired",
  "workflow.alert.resolved",
  "notification.endpoint.failing",
  "notification.endpoint.disabled",
];
/** The API's default page (ListDeliveriesRequest.limit); `limit` in the URL sets another. */
const pageSize = 100;

/** `#/deliveries` is the delivery log (D19), `#/deliveries/<id>` one delivery with its attempts. */
export function DeliveriesPage({ route }: { route: Route }) {
  return route.id ? (
    <DeliveryPage id={route.id} params={route.params} />
  ) : (
    <DeliveryLog params={route.params} />
  );
}

function DeliveryLog({ params }: { params: URLSearchParams }) {
  const { api, workspaceId } = useSession();
  const filters = Object.fromEntries(filterParams.map((name) => [name, params.get(name) ?? undefined]));
  const limitParam = params.get("limit") ?? undefined;
  const cursor = params.get("cursor") ?? undefined;
  const [subscriptions] = useCall(
    (signal) => api.notifications.listSubscriptions({ workspaceId }, { signal }),
    [workspaceId],
  );
  // Passed as typed: a value the API refuses (a limit, a date) is said with the field it names.
  const [page] = useCall(
    (signal) =>
      api.deliveries.listDeliveries(
        {
          workspaceId,
          subscriptionId: filters.subscription,
          status: filters.status,
          eventType: filters.type,
          httpStatusClass: filters.class,
          startDate: filters.from,
          endDate: filters.to,
          eventId: filters.event,
          limit: limitParam ? Number.parseInt(limitParam, 10) : pageSize,
          cursor,
        },
        { signal },
      ),
    [workspaceId, params.toString()],
  );
  const view = (next: Record<string, string | undefined>) =>
    routeHref("deliveries", undefined, { ws: workspaceId, limit: limitParam, ...next });
  const listed = subscriptions.value?.subscriptions ?? [];

  return (
    <section aria-labelledby="deliveries-title">
      <h1 id="deliveries-title">Deliveries</h1>
      <DeliveryFilters params={params} subscriptions={listed} onApply={(next) => navigate(view(next))} />
      <CallError state={page} />
      <DeliveryTable
        deliveries={page.value?.deliveries ?? []}
        subscriptions={listed}
        busy={page.status === "loading"}
      />
      <KeysetPager
        label="More deliveries"
        labels={newestFirstLabels}
        cursor={cursor}
        nextCursor={page.value?.nextCursor}
        hrefAt={(at) => view({ ...filters, cursor: at })}
      />
    </section>
  );
}

/**
 * The filters, read from the URL and written back to it; a submitted form starts at the newest page.
 * Uncontrolled fields, drawn afresh when the URL changes, as the logs' FilterForm explains.
 */
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
    const value = (name: string) => String(form.get(name) ?? "").trim() || undefined;
    onApply({
      ...Object.fromEntries(filterParams.map((name) => [name, value(name)])),
      from: localInputToIso(value("from") ?? ""),
      to: localInputToIso(value("to") ?? ""),
    });
  }
  return (
    <form
      key={params.toString()}
      class="filters"
      onSubmit={submit}
      onReset={() => onApply({})}
      aria-label="Filters"
    >
      <label>
        Subscription
        <select name="subscription">
          <option value="">any</option>
          {unlisted && (
            <option value={chosen} selected>
              {chosen}
            </option>
          )}
          {subscriptions.map((subscription) => (
            <option key={subscription.id} value={subscription.id} selected={subscription.id === chosen}>
              {subscriptionLabel(subscription)}
            </option>
          ))}
        </select>
      </label>
      <Choice label="Status" name="status" values={statuses} params={params} />
      <label>
        Event type
        <input
          name="type"
          list="event-types"
          defaultValue={params.get("type") ?? ""}
          placeholder="workflow.execution.completed"
        />
        <datalist id="event-types">
          {eventTypes.map((type) => (
            <option key={type} value={type} />
          ))}
        </datalist>
      </label>
      <Choice label="HTTP status" name="class" values={statusClasses} params={params} />
      <label>
        Created from
        <input type="datetime-local" name="from" defaultValue={isoToLocalInput(params.get("from"))} />
      </label>
      <label>
        Created before
        <input type="datetime-local" name="to" defaultValue={isoToLocalInput(params.get("to"))} />
      </label>
      <label>
        Event id
        <input name="event" defaultValue={params.get("event") ?? ""} placeholder="evt_…" />
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

/** A filter of a few values, or any. */
function Choice({
  label,
  name,
  values,
  params,
}: {
  label: string;
  name: string;
  values: readonly string[];
  params: URLSearchParams;
}) {
  return (
    <label>
      {label}
      <select name={name}>
        {["", ...values].map((option) => (
          <option key={option} value={option} selected={(params.get(name) ?? "") === option}>
            {option || "any"}
          </option>
        ))}
      </select>
    </label>
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
          <th scope="col" class="number">
            Last HTTP status
          </th>
          <th scope="col">Log entry</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.length === 0 && !busy && (
          <tr>
            <td colSpan={8}>No deliveries match.</td>
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
            <td class="number">{delivery.lastHttpStatus ?? "–"}</td>
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
