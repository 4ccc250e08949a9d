import { type JsonValue, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { useEffect, useState } from "preact/hooks";
import type {
  DeliveryAttempt,
  RedeliverResponse,
} from "../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import { errorMessage } from "./api.js";
import { useSession } from "./context.js";
import { formatDuration, formatTime } from "./format.js";
import { JsonText } from "./json-text.js";
import { KeysetPager, newestFirstLabels } from "./keyset-pager.js";
import { routeHref } from "./router.js";
import { subscriptionLabel } from "./subscription-text.js";
import { CallError, useCall } from "./use-call.js";

/** How often a delivery still being attempted is read again, so its attempts appear as they are made. */
const pendingEveryMs = 1_000;

/**
 * One delivery (D19): what was sent and to which subscription, every attempt of every series (the newest
 * 100, then older pages by the attempts cursor, D40), and Redeliver, which sends the same event with the
 * same delivery id and Idempotency-Key as a new series.
 */
export function DeliveryPage({ id, params }: { id: string; params: URLSearchParams }) {
  const { api, workspaceId } = useSession();
  const cursor = params.get("cursor") ?? undefined;
  const [state, refresh] = useCall(
    (signal) => api.deliveries.getDelivery({ id, attemptsCursor: cursor }, { signal }),
    [id, cursor],
  );
  // Named by its channel and target when it is still listed; a deleted one by its id.
  const [subscriptions] = useCall(
    (signal) => api.notifications.listSubscriptions({ workspaceId }, { signal }),
    [workspaceId],
  );
  const [redelivered, setRedelivered] = useState<RedeliverResponse>();
  const [refused, setRefused] = useState<string>();
  const [busy, setBusy] = useState(false);
  const delivery = state.value?.delivery;
  const pending = delivery?.status === "pending";
  useEffect(() => {
    if (!pending || state.status !== "done") return;
    const timer = setTimeout(refresh, pendingEveryMs);
    return () => clearTimeout(timer);
  }, [state]);

  async function redeliver() {
    setBusy(true);
    setRefused(undefined);
    try {
      setRedelivered(await api.deliveries.redeliver({ id }));
      refresh();
    } catch (caught) {
      setRefused(errorMessage(caught));
    } finally {
      setBusy(false);
    }
  }

  const event = state.value?.event ? (toJson(ValueSchema, state.value.event) as JsonValue) : undefined;
  const executionId = executionOf(event);
  const listed = subscriptions.value?.subscriptions.find((s) => s.id === delivery?.subscriptionId);
  const subscriptionName = listed && subscriptionLabel(listed);
  return (
    <section aria-labelledby="delivery-title">
      <p>
        <a href={routeHref("deliveries", undefined, { ws: workspaceId })}>All deliveries</a>
      </p>
      <h1 id="delivery-title">
        Delivery <code>{id}</code>
      </h1>
      <CallError state={state} />
      {delivery && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span class={`status ${delivery.status}`}>{delivery.status}</span>
              {pending && " (attempts appear here as they are made)"}
            </dd>
            <dt>Event</dt>
            <dd>
              {delivery.eventType}{" "}
              <a
                href={routeHref("deliveries", undefined, { ws: workspaceId, event: delivery.eventId })}
                title="Every delivery of this event"
              >
                <code>{delivery.eventId}</code>
              </a>
            </dd>
            <dt>Idempotency-Key</dt>
            <dd>
              <code>{delivery.id}</code> (also <code>service-delivery-id</code>, the same on every attempt)
            </dd>
            <dt>Subscription</dt>
            <dd>
              <a href={routeHref("subscriptions", delivery.subscriptionId, { ws: workspaceId })}>
                {subscriptionName ?? delivery.subscriptionId}
              </a>
            </dd>
            {delivery.logId && (
              <>
                <dt>Log entry</dt>
                <dd>
                  <a href={routeHref("logs", delivery.logId, { ws: workspaceId })}>
                    <code>{delivery.logId}</code>
                  </a>
                </dd>
              </>
            )}
            {delivery.logId && executionId && (
              <>
                <dt>Execution</dt>
                <dd>
                  <a href={routeHref("logs", undefined, { ws: workspaceId, execution: executionId })}>
                    <code>{executionId}</code>
                  </a>
                </dd>
              </>
            )}
            <dt>Attempts</dt>
            <dd>{delivery.attemptCount}</dd>
            {delivery.lastError && (
              <>
                <dt>Last error</dt>
                <dd>{delivery.lastError}</dd>
              </>
            )}
            <dt>Created</dt>
            <dd title={delivery.createdAt}>{formatTime(delivery.createdAt)}</dd>
            <dt>Updated</dt>
            <dd title={delivery.updatedAt}>{formatTime(delivery.updatedAt)}</dd>
          </dl>
          <div class="action-row">
            <button type="button" disabled={busy || pending} onClick={() => void redeliver()}>
              {busy ? "Redelivering…" : "Redeliver"}
            </button>
            {pending && <span>Redeliver once this delivery has succeeded or failed.</span>}
          </div>
          {refused && (
            <p class="error" role="alert">
              {refused}
            </p>
          )}
          <p role="status" class={redelivered ? "notice" : "visually-hidden"}>
            {redelivered &&
              `Redelivery started as series ${redelivered.series}: the same event, delivery id and ` +
                "Idempotency-Key."}
          </p>
          <h2 id="attempts-title">Attempts</h2>
          <AttemptTable attempts={state.value?.attempts ?? []} />
          {(cursor || state.value?.nextAttemptsCursor) && (
            <KeysetPager
              label="More attempts"
              labels={newestFirstLabels}
              cursor={cursor}
              nextCursor={state.value?.nextAttemptsCursor}
              hrefAt={(at) => routeHref("deliveries", id, { ws: workspaceId, cursor: at })}
            />
          )}
          {event !== undefined && (
            <details>
              <summary>The event as sent</summary>
              <JsonText value={event} />
            </details>
          )}
        </>
      )}
    </section>
  );
}

function AttemptTable({ attempts }: { attempts: DeliveryAttempt[] }) {
  return (
    <table class="attempts" aria-labelledby="attempts-title">
      <thead>
        <tr>
          <th scope="col" class="number">
            Series
          </th>
          <th scope="col" class="number">
            Attempt
          </th>
          <th scope="col">Started</th>
          <th scope="col" class="number">
            Duration
          </th>
          <th scope="col">Outcome</th>
          <th scope="col" class="number">
            HTTP status
          </th>
          <th scope="col">Response (first 1 KB)</th>
          <th scope="col">Error</th>
        </tr>
      </thead>
      <tbody>
        {attempts.length === 0 && (
          <tr>
            <td colSpan={8}>No attempt yet.</td>
          </tr>
        )}
        {attempts.map((attempt) => (
          <tr key={`${attempt.series}-${attempt.attempt}`}>
            <td class="number">{attempt.series}</td>
            <td class="number">{attempt.attempt}</td>
            <td>
              <time dateTime={attempt.startedAt} title={attempt.startedAt}>
                {formatTime(attempt.startedAt)}
              </time>
            </td>
            <td class="number">{formatDuration(attempt.durationMs)}</td>
            <td>
              <span class={`status ${attempt.outcome}`}>{attempt.outcome}</span>
            </td>
            <td class="number">{attempt.httpStatus ?? "–"}</td>
            <td>{attempt.responseSnippet ? <code class="snippet">{attempt.responseSnippet}</code> : "–"}</td>
            <td>{attempt.error ?? "–"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The execution a completion event describes (`data.executionId`); other events describe none. */
function executionOf(event: JsonValue | undefined): string | undefined {
  if (typeof event !== "object" || event === null || Array.isArray(event)) return undefined;
  const data = event.data;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  return typeof data.executionId === "string" ? data.executionId : undefined;
}
