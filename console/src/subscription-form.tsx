import type { MessageInitShape } from "@bufbuild/protobuf";
import { useState } from "preact/hooks";
import type {
  NotificationSubscription,
  NotificationSubscriptionSchema,
} from "../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { errorMessage } from "./api.js";
import { levels, triggers } from "./log-filters.js";
import { alertRuleKind, alertRuleKinds } from "./subscription-alert-rules.js";
import { channelLabels } from "./subscription-text.js";
import { useWorkspaceCatalog } from "./use-workflows.js";

/** A subscription as a plain init object (the message type itself left out, so it can be spread). */
export type SubscriptionInput = Exclude<
  MessageInitShape<typeof NotificationSubscriptionSchema>,
  NotificationSubscription
>;

/** What a submitted form asks the API for: the subscription, and for an update the fields it replaces. */
export interface SubscriptionSave {
  subscription: SubscriptionInput;
  /** Proto field names (UpdateSubscriptionRequest.update_mask): a filter left empty goes back to "all". */
  updateMask: string[];
}

const includes = [
  { field: "includeFinalOutput", label: "Final output" },
  { field: "includeTraceSpans", label: "Trace spans" },
  { field: "includeRateLimits", label: "Rate limits" },
  { field: "includeUsageData", label: "Usage data" },
] as const;
type IncludeField = (typeof includes)[number]["field"];

/** What happens to a webhook's signing secret (D18, D33): kept, generated (shown once), given, removed. */
type SecretMode = "none" | "keep" | "generate" | "own" | "remove";

/** The event types a subscription may take (D38): the default three first. */
const eventTypes = [
  { type: "workflow.execution.completed", hint: "an execution completed; an alert on one comes as this too" },
  { type: "workflow.alert.fired", hint: "a no_activity alert fired" },
  { type: "workflow.alert.resolved", hint: "an alert resolved" },
  { type: "subscription.held", hint: "the endpoint kept failing and is held" },
  { type: "subscription.released", hint: "a held endpoint answered again" },
  { type: "subscription.disabled", hint: "an endpoint was disabled" },
  { type: "delivery.failed", hint: "a delivery failed for good" },
] as const;
const defaultEventTypes: string[] = eventTypes.slice(0, 3).map(({ type }) => type);

/**
 * One of a webhook's headers (D38) as the form holds it. A stored one shows its name only: its value is
 * never returned, so an empty value keeps it.
 */
interface HeaderRow {
  name: string;
  value: string;
  stored: boolean;
  remove: boolean;
}

/** The form as typed: text stays text until it is sent, so the API judges exactly what was entered. */
interface Draft {
  channel: string;
  /** The webhook's or the chat hook's URL. */
  url: string;
  recipients: string;
  secretMode: SecretMode;
  ownSecret: string;
  signatureScheme: string;
  headers: HeaderRow[];
  allWorkflows: boolean;
  workflowIds: string[];
  levelFilter: string[];
  triggerFilter: string[];
  include: Record<IncludeField, boolean>;
  rule: string;
  threshold: string;
  windowHours: string;
  eventTypes: string[];
  throttle: string;
  active: boolean;
}

/**
 * Creates a subscription of any channel, or edits one (`current`), with every setting the API takes
 * (NotificationSubscription). It checks nothing itself: what the API refuses is said with the field it
 * names (D10), and the form keeps what was typed.
 */
export function SubscriptionForm({
  current,
  onSave,
  onCancel,
}: {
  current?: NotificationSubscription;
  onSave: (save: SubscriptionSave) => Promise<void>;
  onCancel: () => void;
}) {
  const catalog = useWorkspaceCatalog();
  const [draft, setDraft] = useState(() => draftOf(current));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft((previous) => ({ ...previous, [key]: value }));
  const kind = alertRuleKind(draft.rule);
  const workflows = catalog.value?.workflows ?? [];
  const unlisted = draft.workflowIds.filter((id) => !workflows.some((workflow) => workflow.id === id));

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await onSave(saveOf(draft, current));
    } catch (caught) {
      setError(errorMessage(caught));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      class="form subscription-form"
      onSubmit={(event) => void submit(event)}
      noValidate
      aria-label={current ? "Edit subscription" : "New subscription"}
    >
      <fieldset>
        <legend>Channel</legend>
        {Object.entries(channelLabels).map(([channel, label]) => (
          <label key={channel} class="inline">
            <input
              type="radio"
              name="channel"
              value={channel}
              checked={draft.channel === channel}
              onChange={() => set("channel", channel)}
            />
            {label}
          </label>
        ))}
        {draft.channel === "email" ? (
          <label>
            Recipients (one address per line, up to 10)
            <textarea
              rows={3}
              value={draft.recipients}
              onInput={(event) => set("recipients", event.currentTarget.value)}
            />
          </label>
        ) : (
          <label>
            {draft.channel === "slack" ? "Incoming-webhook URL" : "Webhook URL"}
            <input
              value={draft.url}
              placeholder="https://…"
              onInput={(event) => set("url", event.currentTarget.value)}
            />
          </label>
        )}
      </fieldset>

      {draft.channel === "webhook" && <SecretChoice draft={draft} current={current} set={set} />}
      {draft.channel === "webhook" && (
        <HeaderRows rows={draft.headers} onChange={(rows) => set("headers", rows)} />
      )}

      <fieldset>
        <legend>Workflows</legend>
        <label class="inline">
          <input
            type="checkbox"
            checked={draft.allWorkflows}
            onChange={(event) => set("allWorkflows", event.currentTarget.checked)}
          />
          All workflows, including ones created later
        </label>
        <div class="choices">
          {workflows.map((workflow) => (
            <Toggle
              key={workflow.id}
              label={workflow.name}
              value={workflow.id}
              list={draft.workflowIds}
              disabled={draft.allWorkflows}
              onChange={(next) => set("workflowIds", next)}
            />
          ))}
          {unlisted.map((id) => (
            <Toggle
              key={id}
              label={id}
              value={id}
              list={draft.workflowIds}
              disabled={draft.allWorkflows}
              onChange={(next) => set("workflowIds", next)}
            />
          ))}
          {catalog.status === "done" && workflows.length === 0 && <p>This workspace has no workflows yet.</p>}
        </div>
      </fieldset>

      <fieldset class="row">
        <legend>Levels (none checked: every level)</legend>
        {levels.map((level) => (
          <Toggle
            key={level}
            label={level}
            value={level}
            list={draft.levelFilter}
            onChange={(next) => set("levelFilter", next)}
          />
        ))}
      </fieldset>

      <fieldset class="row">
        <legend>Triggers (none checked: every trigger)</legend>
        {triggers.map((trigger) => (
          <Toggle
            key={trigger}
            label={trigger}
            value={trigger}
            list={draft.triggerFilter}
            onChange={(next) => set("triggerFilter", next)}
          />
        ))}
      </fieldset>

      <fieldset class="row">
        <legend>Add to the event</legend>
        {includes.map(({ field, label }) => (
          <label key={field} class="inline">
            <input
              type="checkbox"
              checked={draft.include[field]}
              onChange={(event) => set("include", { ...draft.include, [field]: event.currentTarget.checked })}
            />
            {label}
          </label>
        ))}
      </fieldset>

      <fieldset>
        <legend>Event types (none checked: the first three)</legend>
        {eventTypes.map(({ type, hint }) => (
          <label key={type} class="inline">
            <input
              type="checkbox"
              value={type}
              checked={draft.eventTypes.includes(type)}
              onChange={(event) =>
                set(
                  "eventTypes",
                  event.currentTarget.checked
                    ? [...draft.eventTypes, type]
                    : draft.eventTypes.filter((listed) => listed !== type),
                )
              }
            />
            <code>{type}</code> <span class="hint">{hint}</span>
          </label>
        ))}
      </fieldset>

      <fieldset>
        <legend>Pace</legend>
        <label>
          Deliveries per second at most (1 to 1000; empty: no pace)
          <input
            type="number"
            step={1}
            value={draft.throttle}
            onInput={(event) => set("throttle", event.currentTarget.value)}
          />
        </label>
      </fieldset>

      <fieldset>
        <legend>Alert rule</legend>
        <label>
          Rule
          <select value={draft.rule} onChange={(event) => set("rule", event.currentTarget.value)}>
            <option value="">None: notify on every matching execution</option>
            {alertRuleKinds.map(({ rule }) => (
              <option key={rule} value={rule}>
                {rule}
              </option>
            ))}
          </select>
        </label>
        {kind && (
          <>
            <p class="hint">
              Notifies only when {kind.firesWhen}, per workflow, at most once an hour, and once more when it
              resolves.
            </p>
            <label>
              X ({kind.unit})
              <input
                type="number"
                step="any"
                value={draft.threshold}
                onInput={(event) => set("threshold", event.currentTarget.value)}
              />
            </label>
            {kind.windowed && (
              <label>
                Y (hours)
                <input
                  type="number"
                  step="any"
                  value={draft.windowHours}
                  onInput={(event) => set("windowHours", event.currentTarget.value)}
                />
              </label>
            )}
          </>
        )}
      </fieldset>

      {!current && (
        <label class="inline">
          <input
            type="checkbox"
            checked={draft.active}
            onChange={(event) => set("active", event.currentTarget.checked)}
          />
          Active: deliver from now on
        </label>
      )}

      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="action-row">
        <button type="submit" disabled={busy}>
          {busy ? "Saving…" : current ? "Save changes" : "Create subscription"}
        </button>
        <button type="button" class="quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function SecretChoice({
  draft,
  current,
  set,
}: {
  draft: Draft;
  current: NotificationSubscription | undefined;
  set: <K extends keyof Draft>(key: K, value: Draft[K]) => void;
}) {
  const stored = current?.webhook;
  const modes: (readonly [SecretMode, string])[] = stored
    ? [
        ["keep", stored.hasSecret ? "Keep the current secret" : "Keep unsigned"],
        ["generate", "Generate a new secret now (shown once; the old one stops at once)"],
        ["own", "Use my own secret"],
        ...(stored.hasSecret
          ? [["remove", "Remove the secret: deliveries are no longer signed"] as const]
          : []),
      ]
    : [
        ["generate", "Generate a secret (shown once)"],
        ["own", "Use my own secret"],
        ["none", "No secret: deliveries are not signed"],
      ];
  return (
    <fieldset>
      <legend>Signing secret</legend>
      <label>
        Signature scheme
        <select
          value={draft.signatureScheme}
          onChange={(event) => set("signatureScheme", event.currentTarget.value)}
        >
          {signatureSchemes.map(([scheme, label]) => (
            <option key={scheme} value={scheme}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {modes.map(([mode, label]) => (
        <label key={mode} class="inline">
          <input
            type="radio"
            name="secretMode"
            value={mode}
            checked={draft.secretMode === mode}
            onChange={() => set("secretMode", mode)}
          />
          {label}
        </label>
      ))}
      {draft.secretMode === "own" && (
        <label>
          {draft.signatureScheme === "standard"
            ? "Your secret (whsec_ and the base64 of 24 to 64 bytes)"
            : "Your secret (16 to 256 characters)"}
          <input
            type="password"
            autocomplete="off"
            value={draft.ownSecret}
            onInput={(event) => set("ownSecret", event.currentTarget.value)}
          />
        </label>
      )}
    </fieldset>
  );
}

/** D39: how attempts are signed; changing it on a signed webhook needs a new secret too. */
const signatureSchemes = [
  ["service", "The service-signature header (the spec's)"],
  ["standard", "Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)"],
] as const;

/**
 * A webhook's own headers (D38), such as a gateway's token: names and values to send with every attempt.
 * Values are write-only: a stored header shows its name, and an empty value keeps what is stored.
 */
function HeaderRows({ rows, onChange }: { rows: HeaderRow[]; onChange: (rows: HeaderRow[]) => void }) {
  const change = (index: number, part: Partial<HeaderRow>) =>
    onChange(rows.map((row, at) => (at === index ? { ...row, ...part } : row)));
  return (
    <fieldset>
      <legend>Headers sent with every attempt</legend>
      {rows.length === 0 && <p class="hint">None.</p>}
      {rows.map((row, index) => (
        <div key={index} class="header-row">
          {row.stored ? (
            <code>{row.name}</code>
          ) : (
            <label>
              Name
              <input
                value={row.name}
                onInput={(event) => change(index, { name: event.currentTarget.value })}
              />
            </label>
          )}
          <label>
            {row.stored ? `New value of ${row.name} (empty: keep the stored one)` : "Value"}
            <input
              type="password"
              autocomplete="off"
              value={row.value}
              disabled={row.remove}
              onInput={(event) => change(index, { value: event.currentTarget.value })}
            />
          </label>
          {row.stored && (
            <label class="inline">
              <input
                type="checkbox"
                checked={row.remove}
                onChange={(event) => change(index, { remove: event.currentTarget.checked })}
              />
              Remove {row.name}
            </label>
          )}
        </div>
      ))}
      <p>
        <button
          type="button"
          class="quiet"
          onClick={() => onChange([...rows, { name: "", value: "", stored: false, remove: false }])}
        >
          Add a header
        </button>
      </p>
    </fieldset>
  );
}

/** A checkbox that adds its value to a list or takes it out. */
function Toggle({
  label,
  value,
  list,
  disabled,
  onChange,
}: {
  label: string;
  value: string;
  list: string[];
  disabled?: boolean;
  onChange: (next: string[]) => void;
}) {
  return (
    <label class="inline">
      <input
        type="checkbox"
        value={value}
        checked={list.includes(value)}
        disabled={disabled}
        onChange={(event) =>
          onChange(event.currentTarget.checked ? [...list, value] : list.filter((listed) => listed !== value))
        }
      />
      {label}
    </label>
  );
}

function draftOf(current: NotificationSubscription | undefined): Draft {
  const rule = current?.alertRule;
  return {
    channel: current?.channel ?? "webhook",
    url: current?.webhook?.url ?? current?.slack?.url ?? "",
    recipients: current?.email?.recipients.join("\n") ?? "",
    secretMode: current?.webhook ? "keep" : "generate",
    ownSecret: "",
    signatureScheme: current?.webhook?.signatureScheme ?? "service",
    headers: (current?.webhook?.headerNames ?? []).map((name) => ({
      name,
      value: "",
      stored: true,
      remove: false,
    })),
    allWorkflows: current ? current.allWorkflows === true : true,
    workflowIds: current?.workflowIds ?? [],
    levelFilter: current?.levelFilter ?? [],
    triggerFilter: current?.triggerFilter ?? [],
    include: {
      includeFinalOutput: current?.includeFinalOutput === true,
      includeTraceSpans: current?.includeTraceSpans === true,
      includeRateLimits: current?.includeRateLimits === true,
      includeUsageData: current?.includeUsageData === true,
    },
    rule: rule?.rule ?? "",
    threshold: rule?.rule ? String(rule.threshold) : "",
    windowHours: rule?.windowHours === undefined ? "" : String(rule.windowHours),
    eventTypes: current?.eventTypes ?? defaultEventTypes,
    throttle: current?.throttlePerSecond === undefined ? "" : String(current.throttlePerSecond),
    active: current?.active ?? true,
  };
}

/**
 * The request a draft makes. Every setting the form shows is sent, so an update replaces them all (an
 * empty pace removes it); an empty number is sent as NaN, which the API refuses naming the field, rather
 * than as a silent 0.
 */
function saveOf(draft: Draft, current: NotificationSubscription | undefined): SubscriptionSave {
  const kind = alertRuleKind(draft.rule);
  const subscription: SubscriptionInput = {
    channel: draft.channel,
    ...destinationOf(draft),
    allWorkflows: draft.allWorkflows,
    workflowIds: draft.allWorkflows ? [] : draft.workflowIds,
    levelFilter: draft.levelFilter,
    triggerFilter: draft.triggerFilter,
    ...draft.include,
    // An empty rule removes the current one (UpdateSubscriptionRequest); a new subscription just has none.
    alertRule: kind
      ? {
          rule: kind.rule,
          threshold: numberOf(draft.threshold),
          windowHours: kind.windowed && draft.windowHours.trim() ? numberOf(draft.windowHours) : undefined,
        }
      : current?.alertRule
        ? { rule: "" }
        : undefined,
    eventTypes: draft.eventTypes,
    ...(draft.throttle.trim() === "" ? {} : { throttlePerSecond: Number(draft.throttle) }),
    ...(current ? {} : { active: draft.active }),
  };
  const updateMask = current
    ? [
        "channel",
        draft.channel,
        "all_workflows",
        "workflow_ids",
        "level_filter",
        "trigger_filter",
        ...includes.map(({ field }) => protoName(field)),
        "alert_rule",
        "event_types",
        "throttle_per_second",
      ]
    : [];
  return { subscription, updateMask };
}

function destinationOf(draft: Draft): Pick<SubscriptionInput, "webhook" | "email" | "slack"> {
  if (draft.channel === "email")
    return { email: { recipients: draft.recipients.split(/[\s,;]+/).filter(Boolean) } };
  if (draft.channel === "slack") return { slack: { url: draft.url.trim() } };
  const secret =
    draft.secretMode === "generate"
      ? { generateSecret: true }
      : draft.secretMode === "own"
        ? { secret: draft.ownSecret }
        : draft.secretMode === "remove"
          ? { secret: "" }
          : {};
  return {
    webhook: {
      url: draft.url.trim(),
      ...secret,
      signatureScheme: draft.signatureScheme,
      headers: headersOf(draft.headers),
    },
  };
}

/** D38: a new or changed header sets its value, a removed one is sent empty, an untouched one is left out. */
function headersOf(rows: HeaderRow[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const row of rows) {
    if (row.remove) headers[row.name] = "";
    else if (row.value !== "" || !row.stored) headers[row.name.trim()] = row.value;
  }
  return headers;
}

function numberOf(text: string): number {
  return text.trim() === "" ? Number.NaN : Number(text);
}

/** includeFinalOutput → include_final_output: field masks name proto fields. */
function protoName(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
