import { useEffect, useRef, useState } from "preact/hooks";
import type { TestSubscriptionResponse } from "../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import type { NotificationSubscription } from "../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { errorMessage } from "./api.js";
import { useSession } from "./context.js";
import { formatDuration, formatTime } from "./format.js";
import { routeHref } from "./router.js";
import { SubscriptionForm } from "./subscription-form.js";
import { RecoverySection } from "./subscription-recovery.js";
import { SecretOnce } from "./subscription-secret.js";
import {
  channelLabels,
  filterText,
  includesOf,
  ruleText,
  StatusText,
  targetOf,
  workflowsOf,
} from "./subscription-text.js";
import { CallError, useCall } from "./use-call.js";
import { useWorkspaceCatalog } from "./use-workflows.js";

/** The outcome of the last action on the page, said once in words. */
type Said = { ok: true; text: string } | { ok: false; text: string };

/**
 * One subscription: its settings, status (D35) and alert firings per workflow (D21, D34), and what can be
 * done with it: edit, enable or disable, send a test event, rotate the secret (D33), recover its failed
 * deliveries (D37), delete.
 */
export function SubscriptionDetail({
  id,
  secret,
  onSecret,
  onDeleted,
}: {
  id: string;
  /** A secret the API has just returned for this subscription, shown until dismissed. */
  secret: string | undefined;
  onSecret: (secret: string | undefined) => void;
  onDeleted: (subscription: NotificationSubscription) => void;
}) {
  const { api, workspaceId } = useSession();
  const [state, refresh] = useCall(
    (signal) => api.notifications.getSubscription({ workspaceId, id }, { signal }),
    [workspaceId, id],
  );
  const [editing, setEditing] = useState(false);
  const [said, setSaid] = useState<Said>();
  const [busy, setBusy] = useState<string>();
  const [tested, setTested] = useState<TestSubscriptionResponse>();
  const subscription = state.value?.subscription;

  /** Runs one action; its answer or refusal is said, and the subscription read again. */
  async function act<T>(name: string, call: () => Promise<T>, done: (answer: T) => string): Promise<boolean> {
    setBusy(name);
    setSaid(undefined);
    try {
      const answer = await call();
      setSaid({ ok: true, text: done(answer) });
      refresh();
      return true;
    } catch (caught) {
      setSaid({ ok: false, text: errorMessage(caught) });
      return false;
    } finally {
      setBusy(undefined);
    }
  }

  if (!subscription) {
    return (
      <section>
        <h1>Subscription {id}</h1>
        <CallError state={state} />
        {state.status === "loading" && <p>Loading…</p>}
      </section>
    );
  }
  const request = { workspaceId, id };
  const channel = channelLabels[subscription.channel] ?? subscription.channel;

  return (
    <section aria-labelledby="subscription-title">
      <p>
        <a href={routeHref("subscriptions", undefined, { ws: workspaceId })}>All subscriptions</a>
      </p>
      <h1 id="subscription-title">
        {channel} subscription <code>{subscription.id}</code>
      </h1>
      {secret && <SecretOnce secret={secret} onDismiss={() => onSecret(undefined)} />}
      <CallError state={state} />

      {editing ? (
        <SubscriptionForm
          current={subscription}
          onCancel={() => setEditing(false)}
          onSave={async ({ subscription: changes, updateMask }) => {
            const answer = await api.notifications.updateSubscription({
              ...request,
              subscription: changes,
              updateMask: { paths: updateMask },
            });
            onSecret(answer.secret);
            setEditing(false);
            setSaid({ ok: true, text: "Saved." });
            refresh();
          }}
        />
      ) : (
        <>
          <Facts subscription={subscription} />
          <div class="action-row">
            <button type="button" onClick={() => setEditing(true)}>
              Edit
            </button>
            <button
              type="button"
              disabled={busy !== undefined}
              onClick={() =>
                void (subscription.active === false
                  ? act(
                      "enable",
                      () => api.notifications.enableSubscription(request),
                      () => "Enabled: it receives events again.",
                    )
                  : act(
                      "disable",
                      () => api.notifications.disableSubscription(request),
                      () => "Disabled: it keeps its settings and receives nothing until enabled.",
                    ))
              }
            >
              {subscription.active === false ? "Enable" : "Disable"}
            </button>
            <button
              type="button"
              disabled={busy !== undefined}
              onClick={() =>
                void act(
                  "test",
                  () => api.deliveries.testSubscription(request),
                  (answer) => {
                    setTested(answer);
                    return "Test event sent.";
                  },
                )
              }
            >
              {busy === "test" ? "Sending a test event…" : "Send test event"}
            </button>
            <a href={routeHref("deliveries", undefined, { ws: workspaceId, subscription: subscription.id })}>
              Deliveries of this subscription
            </a>
          </div>
          <Said said={said} />
          {tested && <TestResult tested={tested} />}
          {subscription.webhook && (
            <RotateSecret
              busy={busy !== undefined}
              onRotate={(secretGiven, graceSeconds) =>
                act(
                  "rotate",
                  () =>
                    api.notifications.rotateSecret({
                      ...request,
                      secret: secretGiven,
                      gracePeriodSeconds: graceSeconds,
                    }),
                  (answer) => {
                    onSecret(answer.secret);
                    const until = answer.subscription?.webhook?.previousSecretExpiresAt;
                    return until
                      ? `Secret rotated: the previous one signs beside it until ${formatTime(until)}.`
                      : "Secret rotated: the previous one no longer signs.";
                  },
                )
              }
            />
          )}
          <RecoverySection subscriptionId={subscription.id} active={subscription.active !== false} />
          <AlertStates subscription={subscription} />
          <DeleteSubscription
            busy={busy !== undefined}
            onDelete={async () => {
              setBusy("delete");
              try {
                await api.notifications.deleteSubscription(request);
                onDeleted(subscription);
              } catch (caught) {
                setSaid({ ok: false, text: errorMessage(caught) });
                setBusy(undefined);
              }
            }}
          />
        </>
      )}
    </section>
  );
}

function Facts({ subscription }: { subscription: NotificationSubscription }) {
  const catalog = useWorkspaceCatalog();
  const nameOf = catalog.value?.nameOf ?? ((workflowId: string) => workflowId);
  const webhook = subscription.webhook;
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <StatusText subscription={subscription} />
      </dd>
      <dt>{subscription.channel === "email" ? "Recipients" : "URL"}</dt>
      <dd>
        <code>{targetOf(subscription)}</code>
      </dd>
      {webhook && (
        <>
          <dt>Signing</dt>
          <dd>
            {webhook.hasSecret ? "Signed with a secret (never shown again)" : "Not signed"}
            {webhook.signatureScheme === "standard" && ", Standard Webhooks"}
            {webhook.previousSecretExpiresAt &&
              `; the previous secret also signs until ${formatTime(webhook.previousSecretExpiresAt)}`}
          </dd>
          <dt>Headers</dt>
          <dd>
            {webhook.headerNames.length
              ? `${webhook.headerNames.join(", ")} (values never shown again)`
              : "none of its own"}
          </dd>
        </>
      )}
      <dt>Event types</dt>
      <dd>{subscription.eventTypes.join(", ")}</dd>
      <dt>Pace</dt>
      <dd>
        {subscription.throttlePerSecond === undefined
          ? "none"
          : `at most ${subscription.throttlePerSecond} deliveries a second`}
      </dd>
      <dt>Workflows</dt>
      <dd>{workflowsOf(subscription, nameOf)}</dd>
      <dt>Levels</dt>
      <dd>{filterText(subscription.levelFilter, "every level")}</dd>
      <dt>Triggers</dt>
      <dd>{filterText(subscription.triggerFilter, "every trigger")}</dd>
      <dt>Added to the event</dt>
      <dd>{includesOf(subscription)}</dd>
      <dt>Alert rule</dt>
      <dd>{ruleText(subscription.alertRule)}</dd>
      <dt>Created</dt>
      <dd title={subscription.createdAt}>{formatTime(subscription.createdAt)}</dd>
      <dt>Updated</dt>
      <dd title={subscription.updatedAt}>{formatTime(subscription.updatedAt)}</dd>
    </dl>
  );
}

function Said({ said }: { said: Said | undefined }) {
  if (!said) return <p role="status" class="visually-hidden" />;
  return said.ok ? (
    <p role="status" class="notice">
      {said.text}
    </p>
  ) : (
    <p role="alert" class="error">
      {said.text}
    </p>
  );
}

/** TestSubscription's answer: the one attempt through the real channel, and the delivery it made. */
function TestResult({ tested }: { tested: TestSubscriptionResponse }) {
  const { workspaceId } = useSession();
  const attempt = tested.attempt;
  return (
    <section class="panel" aria-labelledby="test-result-title">
      <h2 id="test-result-title">Test event</h2>
      <dl class="facts">
        <dt>Delivery</dt>
        <dd>
          <a href={routeHref("deliveries", tested.deliveryId, { ws: workspaceId })}>{tested.deliveryId}</a>
        </dd>
        <dt>Outcome</dt>
        <dd>
          {attempt ? (
            <span class={`status ${attempt.outcome}`}>{attempt.outcome}</span>
          ) : (
            "no attempt recorded"
          )}
        </dd>
        {attempt?.httpStatus !== undefined && (
          <>
            <dt>HTTP status</dt>
            <dd>{attempt.httpStatus}</dd>
          </>
        )}
        {attempt && (
          <>
            <dt>Duration</dt>
            <dd>{formatDuration(attempt.durationMs)}</dd>
          </>
        )}
        {attempt?.responseSnippet && (
          <>
            <dt>Response</dt>
            <dd>
              <code class="snippet">{attempt.responseSnippet}</code>
            </dd>
          </>
        )}
        {attempt?.error && (
          <>
            <dt>Error</dt>
            <dd>{attempt.error}</dd>
          </>
        )}
      </dl>
    </section>
  );
}

/** D33: a new secret, given or generated, while the current one signs beside it for the grace period. */
function RotateSecret({
  busy,
  onRotate,
}: {
  busy: boolean;
  /** Resolves true once rotated; a refusal keeps the form open with what was typed. */
  onRotate: (secret: string | undefined, graceSeconds: number | undefined) => Promise<boolean>;
}) {
  const [open, setOpen] = useState(false);
  if (!open)
    return (
      <p>
        <button type="button" class="quiet" onClick={() => setOpen(true)}>
          Rotate secret…
        </button>
      </p>
    );
  function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const secret = String(form.get("secret") ?? "");
    const grace = String(form.get("grace") ?? "").trim();
    void onRotate(secret || undefined, grace === "" ? undefined : Number(grace)).then(
      (rotated) => rotated && setOpen(false),
    );
  }
  return (
    <form class="form panel" onSubmit={submit} noValidate aria-labelledby="rotate-title">
      <h2 id="rotate-title">Rotate the signing secret</h2>
      <label>
        New secret (leave empty to generate one, shown once)
        <input name="secret" type="password" autocomplete="off" />
      </label>
      <label>
        Seconds the current secret keeps signing (empty: 86400, 24 h; 0: stop at once)
        <input name="grace" type="number" step={1} />
      </label>
      <div class="action-row">
        <button type="submit" disabled={busy}>
          Rotate secret
        </button>
        <button type="button" class="quiet" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The alert rule's last firing per workflow (AlertState): firing until it resolves (D34). */
function AlertStates({ subscription }: { subscription: NotificationSubscription }) {
  const catalog = useWorkspaceCatalog();
  if (!subscription.alertRule?.rule) return null;
  const states = subscription.alertStates;
  return (
    <section aria-labelledby="alert-states-title">
      <h2 id="alert-states-title">Alert firings per workflow</h2>
      {states.length === 0 ? (
        <p>The rule has not fired yet.</p>
      ) : (
        <table class="alert-states">
          <caption class="visually-hidden">Last firing of the alert rule per workflow</caption>
          <thead>
            <tr>
              <th scope="col">Workflow</th>
              <th scope="col">Rule</th>
              <th scope="col">Status</th>
              <th scope="col">Last fired</th>
              <th scope="col">Reason</th>
              <th scope="col">Resolved</th>
              <th scope="col">Resolution</th>
            </tr>
          </thead>
          <tbody>
            {states.map((alert) => (
              <tr key={alert.workflowId}>
                <td>{catalog.value?.nameOf(alert.workflowId) ?? alert.workflowId}</td>
                <td>{alert.rule}</td>
                <td>
                  <span class={`status ${alert.status}`}>{alert.status}</span>
                </td>
                <td title={alert.lastFiredAt}>{formatTime(alert.lastFiredAt)}</td>
                <td>{alert.reason}</td>
                <td title={alert.resolvedAt}>{alert.resolvedAt ? formatTime(alert.resolvedAt) : "–"}</td>
                <td>{alert.resolutionReason ?? "–"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** Delete asks first, in the page: the subscription stops matching; its deliveries stay readable. */
function DeleteSubscription({ busy, onDelete }: { busy: boolean; onDelete: () => Promise<void> }) {
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <p>
        <button type="button" class="danger" onClick={() => setAsking(true)}>
          Delete…
        </button>
      </p>
    );
  return (
    <fieldset class="confirm">
      <legend>Delete this subscription?</legend>
      <p>
        It stops receiving events and is no longer listed; its deliveries stay readable. This cannot be
        undone.
      </p>
      <div class="action-row">
        <button ref={confirm} type="button" class="danger" disabled={busy} onClick={() => void onDelete()}>
          Delete subscription
        </button>
        <button type="button" class="quiet" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </fieldset>
  );
}
