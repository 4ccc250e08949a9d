import { useEffect, useState } from "preact/hooks";
import { useSession } from "../context.js";
import { navigate, type Route, routeHref } from "../router.js";
import { SubscriptionDetail } from "../subscription-detail.js";
import { SubscriptionForm } from "../subscription-form.js";
import {
  channelLabels,
  filterText,
  includesOf,
  ruleText,
  StatusText,
  targetOf,
  workflowsOf,
} from "../subscription-text.js";
import { CallError, useCall } from "../use-call.js";
import { useWorkspaceCatalog } from "../use-workflows.js";

/** A secret the API returned for one subscription, held in memory only (D18, D24). */
interface Revealed {
  subscriptionId: string;
  secret: string;
}

/**
 * `#/subscriptions` lists the workspace's subscriptions, `#/subscriptions/new` creates one and
 * `#/subscriptions/<id>` shows one. A generated secret stays in this component's state, so it survives the
 * move from the form to the new subscription's page and is gone once the reader leaves it.
 */
export function SubscriptionsPage({ route }: { route: Route }) {
  const { api, workspaceId } = useSession();
  const [revealed, setRevealed] = useState<Revealed>();
  const [notice, setNotice] = useState<string>();
  const id = route.id;
  useEffect(() => {
    if (revealed && revealed.subscriptionId !== id) setRevealed(undefined);
    if (id) setNotice(undefined);
  }, [id]);
  const reveal = (subscriptionId: string, secret: string | undefined) =>
    setRevealed(secret ? { subscriptionId, secret } : undefined);
  const list = routeHref("subscriptions", undefined, { ws: workspaceId });

  if (id === "new") {
    return (
      <section aria-labelledby="new-subscription-title">
        <p>
          <a href={list}>All subscriptions</a>
        </p>
        <h1 id="new-subscription-title">New subscription</h1>
        <SubscriptionForm
          onCancel={() => navigate(list)}
          onSave={async ({ subscription }) => {
            const answer = await api.notifications.createSubscription({ workspaceId, subscription });
            const created = answer.subscription?.id ?? "";
            reveal(created, answer.secret);
            navigate(routeHref("subscriptions", created, { ws: workspaceId }));
          }}
        />
      </section>
    );
  }
  if (id) {
    return (
      <SubscriptionDetail
        key={id}
        id={id}
        secret={revealed?.subscriptionId === id ? revealed.secret : undefined}
        onSecret={(secret) => reveal(id, secret)}
        onDeleted={(subscription) => {
          navigate(list);
          setNotice(`Deleted the ${targetOf(subscription)} subscription (${subscription.id}).`);
        }}
      />
    );
  }
  return <SubscriptionList notice={notice} />;
}

function SubscriptionList({ notice }: { notice: string | undefined }) {
  const { api, workspaceId } = useSession();
  const catalog = useWorkspaceCatalog();
  const [state] = useCall(
    (signal) => api.notifications.listSubscriptions({ workspaceId }, { signal }),
    [workspaceId],
  );
  const subscriptions = state.value?.subscriptions ?? [];
  const nameOf = catalog.value?.nameOf ?? ((workflowId: string) => workflowId);
  return (
    <section aria-labelledby="subscriptions-title">
      <h1 id="subscriptions-title">Subscriptions</h1>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <p class="toolbar">
        <a class="button" href={routeHref("subscriptions", "new", { ws: workspaceId })}>
          New subscription
        </a>
        <a href={routeHref("deliveries", undefined, { ws: workspaceId })}>Delivery log</a>
      </p>
      <CallError state={state} />
      <table class="subscriptions" aria-busy={state.status === "loading"}>
        <caption class="visually-hidden">Notification subscriptions, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">Target</th>
            <th scope="col">Workflows</th>
            <th scope="col">Levels</th>
            <th scope="col">Triggers</th>
            <th scope="col">Added to the event</th>
            <th scope="col">Alert rule</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {subscriptions.length === 0 && state.status !== "loading" && (
            <tr>
              <td colSpan={8}>No subscriptions yet.</td>
            </tr>
          )}
          {subscriptions.map((subscription) => {
            const firing = subscription.alertStates.filter((alert) => alert.status === "firing").length;
            return (
              <tr key={subscription.id}>
                <td>{channelLabels[subscription.channel] ?? subscription.channel}</td>
                <td class="target">
                  <a href={routeHref("subscriptions", subscription.id, { ws: workspaceId })}>
                    {targetOf(subscription)}
                  </a>
                </td>
                <td>{workflowsOf(subscription, nameOf)}</td>
                <td>{filterText(subscription.levelFilter, "all")}</td>
                <td>{filterText(subscription.triggerFilter, "all")}</td>
                <td>{includesOf(subscription)}</td>
                <td>
                  {ruleText(subscription.alertRule)}
                  {firing > 0 && (
                    <>
                      {" "}
                      <span class="status firing">
                        firing for {firing} workflow{firing === 1 ? "" : "s"}
                      </span>
                    </>
                  )}
                </td>
                <td>
                  <StatusText subscription={subscription} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
