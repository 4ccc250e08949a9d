import type { AlertRuleRecord } from "../domain/alert-rules.js";
import { defaultEventTypes, type SubscribableEventType } from "../domain/event-types.js";
import type { HoldState } from "../domain/hold-policy.js";
import {
  admitsExecution,
  type ExecutionFacts,
  type SubscriptionSelection,
} from "../domain/subscription-matching.js";
import { decryptSecret, encryptSecret } from "../security/secrets.js";
import { type Db, writtenRow } from "./database.js";
import type { CappedCreate, Level, Trigger } from "./records.js";

export const channels = ["webhook", "email", "slack"] as const;
export type Channel = (typeof channels)[number];

/** How a webhook's attempts are signed (D39): the spec's service-signature, or Standard Webhooks. */
export const signatureSchemes = ["service", "standard"] as const;
export type SignatureScheme = (typeof signatureSchemes)[number];

/**
 * A webhook's settings (D18, D38, D39). Its headers' names are here; their values are sealed apart, like
 * the secret (D24).
 */
export interface WebhookConfig {
  channel: "webhook";
  url: string;
  signatureScheme: SignatureScheme;
  /** Lower case, sorted. */
  headerNames: string[];
  /** D50: attempts carry the W3C trace context (`traceparent`) when tracing is on; false unless asked. */
  propagateTraceContext: boolean;
}

/** Where a subscription sends: the settings of its one channel (D18, D20). */
export type ChannelConfig =
  | WebhookConfig
  | { channel: "email"; recipients: string[] }
  | { channel: "slack"; url: string };

/** What the event carries besides the spec's fixed fields; the shape of the event builder's includes. */
export interface SubscriptionIncludes {
  finalOutput: boolean;
  traceSpans: boolean;
  rateLimits: boolean;
  usage: boolean;
}

/** Everything a client sets on a subscription, the webhook secret and header values aside. */
export interface SubscriptionSettings extends SubscriptionSelection {
  config: ChannelConfig;
  include: SubscriptionIncludes;
  active: boolean;
  /** D38: at most this many deliveries a second to its endpoint; null for no pace. */
  throttlePerSecond: number | null;
}

/**
 * Settings as a create or an update may give them: what D38 and D39 added may be left out and then takes
 * its default (the default event types, no pace, the service scheme, no headers), as for the rows made
 * before them.
 */
export type SubscriptionSettingsInput = Omit<
  SubscriptionSettings,
  "config" | "eventTypes" | "throttlePerSecond"
> & {
  config: ChannelConfigInput;
  eventTypes?: SubscribableEventType[];
  throttlePerSecond?: number | null;
};

/** A channel's settings as a create or an update may give them: a webhook's D39 scheme and names may be left out. */
export type ChannelConfigInput =
  | Exclude<ChannelConfig, WebhookConfig>
  | (Pick<WebhookConfig, "channel" | "url"> &
      Partial<Pick<WebhookConfig, "signatureScheme" | "headerNames" | "propagateTraceContext">>);

/**
 * Header values a create or an update gives (D38), by lower-case name: each names one of the webhook's
 * headerNames; a name it leaves out keeps its stored value.
 */
export type HeaderValues = Readonly<Record<string, string>>;

export interface SubscriptionRecord extends SubscriptionSettings {
  id: string;
  workspaceId: string;
  /** Whether a webhook secret is stored; the secret itself is never read for the API (D24). */
  hasSecret: boolean;
  /**
   * D33: until when the secret a rotation replaced still signs beside the current one; null when no
   * rotation kept one. A past time means the grace period is over: the old secret no longer signs.
   */
  previousSecretExpiresAt: number | null;
  /** D35: since when every delivery of this webhook or chat endpoint has failed; null when none is failing. */
  failingSince: number | null;
  /** D35: how many deliveries have failed since failingSince. */
  failedDeliveries: number;
  /** D35: why flowlog disabled the subscription itself; null when active or disabled by a client. */
  disabledReason: string | null;
  disabledAt: number | null;
  /** D36: active, held (its deliveries wait for its endpoint) or draining (they are being sent). */
  holdState: HoldState;
  /** D36: when the current hold began; null while active. */
  heldAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** A subscription as delivery needs it: with the plaintext webhook secret. Never hand it to a response or a log (D24). */
export interface SubscriptionForDelivery extends SubscriptionRecord {
  /** The webhook signing secret, null when deliveries are unsigned (or the channel is not webhook). */
  secret: string | null;
  /** D33: the secret a rotation replaced, null when none was kept; it signs only until previousSecretExpiresAt. */
  previousSecret: string | null;
  /** D38: the webhook's headers with their values, by the lower-case names of config.headerNames. */
  headers: Record<string, string>;
  deletedAt: number | null;
}

/** A subscription as a create gives it. */
export type NewSubscription = {
  id: string;
  workspaceId: string;
  createdAt: number;
} & SubscriptionSettingsInput;

/** A new webhook secret, or null to remove it; undefined (in update) keeps the stored one. */
export type SecretChange = string | null | undefined;

/** A row of notification_subscriptions, as both stores read it (D32). */
export interface SubscriptionRow {
  id: string;
  workspace_id: string;
  channel: Channel;
  config_json: string;
  secret_sealed: Buffer | null;
  previous_secret_sealed: Buffer | null;
  previous_secret_expires_at: number | null;
  failing_since: number | null;
  failed_deliveries: number;
  disabled_reason: string | null;
  disabled_at: number | null;
  all_workflows: number;
  workflow_ids_json: string;
  level_filter_json: string;
  trigger_filter_json: string;
  include_final_output: number;
  include_trace_spans: number;
  include_rate_limits: number;
  include_usage_data: number;
  alert_rule_json: string | null;
  active: number;
  event_types_json: string;
  throttle_per_second: number | null;
  headers_sealed: Buffer | null;
  hold_state: HoldState;
  held_at: number | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

const settingsColumns = `channel, config_json, all_workflows, workflow_ids_json, level_filter_json,
  trigger_filter_json, include_final_output, include_trace_spans, include_rate_limits, include_usage_data,
  alert_rule_json, active, event_types_json, throttle_per_second, headers_sealed`;
const settingsValues = `@channel, @config_json, @all_workflows, @workflow_ids_json, @level_filter_json,
  @trigger_filter_json, @include_final_output, @include_trace_spans, @include_rate_limits,
  @include_usage_data, @alert_rule_json, @active, @event_types_json, @throttle_per_second, @headers_sealed`;

/**
 * D35: enabling clears flowlog's own disable and starts the count of failed deliveries afresh:
 * EnableSubscription always, an update when it turns the subscription on. Right-hand sides read the row
 * as it was.
 */
const resetsWhen = (enabled: string) =>
  ["disabled_reason", "disabled_at", "failing_since", "disable_notice_at", "last_failure"]
    .map((column) => `${column} = CASE WHEN ${enabled} THEN NULL ELSE ${column} END`)
    .concat(`failed_deliveries = CASE WHEN ${enabled} THEN 0 ELSE failed_deliveries END`)
    .join(", ");

/**
 * The statements of both stores (D32), with `@name` parameters: the same tables and columns on SQLite
 * and PostgreSQL. A parameter whose type nothing around it gives is CAST, which both dialects read.
 */
export const subscriptionSql = {
  insert: `INSERT INTO notification_subscriptions (id, workspace_id, secret_sealed, created_at, updated_at,
      ${settingsColumns})
    VALUES (@id, @workspace_id, @secret_sealed, @at, @at, ${settingsValues})
    RETURNING *`,
  update: `UPDATE notification_subscriptions
    SET (${settingsColumns}, updated_at) = (${settingsValues}, @at),
      secret_sealed = CASE WHEN @keep_secret = 1 THEN secret_sealed ELSE @secret_sealed END,
      -- A secret set or removed by an update replaces the current one at once: no grace (D33 is RotateSecret's).
      previous_secret_sealed = CASE WHEN @keep_secret = 1 THEN previous_secret_sealed END,
      previous_secret_expires_at = CASE WHEN @keep_secret = 1 THEN previous_secret_expires_at END,
      ${resetsWhen("@active = 1 AND active = 0")}
    WHERE id = @id AND deleted_at IS NULL RETURNING *`,
  // The right-hand sides read the row as it was: the current secret becomes the previous one.
  rotateSecret: `UPDATE notification_subscriptions
    SET previous_secret_sealed = CASE WHEN @keep_previous = 1 THEN secret_sealed END,
      previous_secret_expires_at = CASE WHEN @keep_previous = 1 AND secret_sealed IS NOT NULL
        THEN CAST(@previous_expires_at AS bigint) END,
      secret_sealed = @secret_sealed, updated_at = @at
    WHERE id = @id AND deleted_at IS NULL RETURNING *`,
  setActive: `UPDATE notification_subscriptions SET active = @active, updated_at = @at, ${resetsWhen("@active = 1")}
    WHERE id = @id AND deleted_at IS NULL RETURNING *`,
  /** D33: a replaced secret past its grace period leaves the row; a rotation since then is left alone. */
  clearExpiredSecret: `UPDATE notification_subscriptions
    SET previous_secret_sealed = NULL, previous_secret_expires_at = NULL
    WHERE id = @id AND previous_secret_expires_at <= @now`,
  delete: "UPDATE notification_subscriptions SET deleted_at = @at WHERE id = @id AND deleted_at IS NULL",
  byId: "SELECT * FROM notification_subscriptions WHERE id = @id",
  liveCount:
    "SELECT count(*) AS count FROM notification_subscriptions WHERE workspace_id = @workspaceId AND deleted_at IS NULL",
  byWorkspace: `SELECT * FROM notification_subscriptions WHERE workspace_id = @workspaceId AND deleted_at IS NULL
    ORDER BY created_at, id`,
  // The workspace index narrows to one workspace; its few subscriptions are filtered in process.
  activeOfWorkspace: `SELECT * FROM notification_subscriptions
    WHERE workspace_id = @workspaceId AND active = 1 AND deleted_at IS NULL ORDER BY created_at, id`,
} as const;

/**
 * Notification subscriptions of a workspace (D18). Deleting only marks a subscription, so its deliveries
 * keep their subscription. The webhook secret is kept only as ciphertext bound to its subscription (D24);
 * only the delivery side reads it, through matching and getForDelivery.
 */
export class SubscriptionsStore {
  private readonly statements;
  private readonly cappedCreate;

  constructor(
    db: Db,
    private readonly masterKey: Buffer,
  ) {
    this.statements = {
      insert: db.prepare(subscriptionSql.insert),
      update: db.prepare(subscriptionSql.update),
      rotateSecret: db.prepare(subscriptionSql.rotateSecret),
      clearExpiredSecret: db.prepare(subscriptionSql.clearExpiredSecret),
      setActive: db.prepare(subscriptionSql.setActive),
      delete: db.prepare(subscriptionSql.delete),
      byId: db.prepare(subscriptionSql.byId),
      liveCount: db.prepare(subscriptionSql.liveCount).pluck(),
      byWorkspace: db.prepare(subscriptionSql.byWorkspace),
      activeOfWorkspace: db.prepare(subscriptionSql.activeOfWorkspace),
    };
    this.cappedCreate = db.transaction(
      (
        subscription: NewSubscription,
        parameters: Record<string, unknown>,
        max: number,
      ): CappedCreate<SubscriptionRecord> => {
        const count = this.statements.liveCount.get({ workspaceId: subscription.workspaceId }) as number;
        if (count >= max) return { full: count };
        const row = writtenRow<SubscriptionRow>(this.statements.insert, parameters) as SubscriptionRow;
        return { created: toRecord(row) };
      },
    );
  }

  /**
   * Creates the subscription unless its workspace already has `max` live ones (D26, the API's quota).
   * `headers` holds the value of each of the webhook's headerNames (D38).
   */
  async create(
    subscription: NewSubscription,
    secret: string | null,
    max = Number.POSITIVE_INFINITY,
    headers: HeaderValues = {},
  ): Promise<CappedCreate<SubscriptionRecord>> {
    // Sealed before the transaction: the write lock is held for the count and the insert only.
    const parameters = insertParameters(this.masterKey, subscription, secret, headers);
    return this.cappedCreate.immediate(subscription, parameters, max);
  }

  /**
   * undefined when there is no such subscription or it was deleted. Reads at `now` (as every read of a
   * row does): a replaced secret whose grace period has passed is cleared from the row (D33).
   */
  async get(id: string, now = Date.now()): Promise<SubscriptionRecord | undefined> {
    const row = this.liveRow(id);
    return row && toRecord(this.unexpired(row, now));
  }

  /** The workspace's subscriptions, oldest first. */
  async list(workspaceId: string, now = Date.now()): Promise<SubscriptionRecord[]> {
    const rows = this.statements.byWorkspace.all({ workspaceId }) as SubscriptionRow[];
    return rows.map((row) => toRecord(this.unexpired(row, now)));
  }

  /**
   * Replaces every setting; undefined when the subscription is gone. A header the settings name keeps its
   * stored value unless `headers` gives a new one (D38).
   */
  async update(
    id: string,
    settings: SubscriptionSettingsInput,
    secret: SecretChange,
    at: number,
    headers: HeaderValues = {},
  ): Promise<SubscriptionRecord | undefined> {
    // A subscription never changes workspace, so the context read here is the one it is sealed under.
    const current = this.liveRow(id);
    if (!current) return undefined;
    const row = writtenRow<SubscriptionRow>(
      this.statements.update,
      updateParameters(this.masterKey, current, settings, secret, at, headers),
    );
    return row && toRecord(row);
  }

  /**
   * D33: `secret` becomes the webhook's signing secret; the one it replaces keeps signing beside it until
   * `previousExpiresAt`, or stops at once when that is null. Only the latest replaced secret is kept: a
   * second rotation within a grace period ends the first one's. Undefined when the subscription is gone.
   */
  async rotateSecret(
    id: string,
    secret: string,
    previousExpiresAt: number | null,
    at: number,
  ): Promise<SubscriptionRecord | undefined> {
    const current = this.liveRow(id);
    if (!current) return undefined;
    const row = writtenRow<SubscriptionRow>(this.statements.rotateSecret, {
      id,
      at,
      secret_sealed: this.seal(current.workspace_id, id, secret),
      keep_previous: previousExpiresAt === null ? 0 : 1,
      previous_expires_at: previousExpiresAt,
    });
    return row && toRecord(row);
  }

  /** Enables or disables; undefined when the subscription is gone. */
  async setActive(id: string, active: boolean, at: number): Promise<SubscriptionRecord | undefined> {
    const row = writtenRow<SubscriptionRow>(this.statements.setActive, { active: active ? 1 : 0, at, id });
    return row && toRecord(row);
  }

  /** Marks the subscription deleted; false when it already was or never existed. */
  async delete(id: string, at: number): Promise<boolean> {
    return this.statements.delete.run({ at, id }).changes > 0;
  }

  /**
   * The subscriptions a completed execution notifies (spec "Events"): active, not deleted, and admitting
   * it (domain/subscription-matching.ts). Alert rules are not evaluated here.
   */
  async matching(
    workspaceId: string,
    execution: ExecutionFacts,
    now = Date.now(),
  ): Promise<SubscriptionForDelivery[]> {
    return this.matchingRows(workspaceId, execution).map((row) => this.forDelivery(row, now));
  }

  /** Whether `matching` would return any subscription, read without unsealing a secret. */
  async anyMatching(workspaceId: string, execution: ExecutionFacts): Promise<boolean> {
    return this.matchingRows(workspaceId, execution).length > 0;
  }

  private matchingRows(workspaceId: string, execution: ExecutionFacts): SubscriptionRow[] {
    return (this.statements.activeOfWorkspace.all({ workspaceId }) as SubscriptionRow[]).filter((row) =>
      admitsExecution(toRecord(row), execution),
    );
  }

  /** Deleted ones too (with deletedAt): a delivery in progress decides what a deletion means to it. */
  async getForDelivery(id: string, now = Date.now()): Promise<SubscriptionForDelivery | undefined> {
    const row = this.statements.byId.get({ id }) as SubscriptionRow | undefined;
    return row && this.forDelivery(row, now);
  }

  private liveRow(id: string): SubscriptionRow | undefined {
    const row = this.statements.byId.get({ id }) as SubscriptionRow | undefined;
    return row?.deleted_at === null ? row : undefined;
  }

  private forDelivery(row: SubscriptionRow, now: number): SubscriptionForDelivery {
    return forDelivery(this.masterKey, this.unexpired(row, now));
  }

  /** The row as of `now`: a replaced secret past its grace period is cleared from storage as it is found (D33). */
  private unexpired(row: SubscriptionRow, now: number): SubscriptionRow {
    if (!holdsExpiredSecret(row, now)) return row;
    this.statements.clearExpiredSecret.run({ id: row.id, now });
    return withoutPreviousSecret(row);
  }

  private seal(workspaceId: string, id: string, secret: string): Buffer {
    return sealSecret(this.masterKey, workspaceId, id, secret);
  }
}

/** The insert's parameters, both stores': the settings with their defaults, the secret and headers sealed. */
export function insertParameters(
  masterKey: Buffer,
  subscription: NewSubscription,
  secret: string | null,
  headers: HeaderValues,
): Record<string, unknown> {
  const { id, workspaceId } = subscription;
  const settings = withDefaults(subscription);
  return {
    ...settingsParameters(settings, sealedHeaders(masterKey, workspaceId, id, settings.config, headers, {})),
    id,
    workspace_id: workspaceId,
    secret_sealed: secret === null ? null : sealSecret(masterKey, workspaceId, id, secret),
    at: subscription.createdAt,
  };
}

/** The update's parameters, both stores': `current` is the row it changes, read for its sealed headers. */
export function updateParameters(
  masterKey: Buffer,
  current: SubscriptionRow,
  input: SubscriptionSettingsInput,
  secret: SecretChange,
  at: number,
  headers: HeaderValues,
): Record<string, unknown> {
  const { id, workspace_id: workspaceId } = current;
  const settings = withDefaults(input);
  const stored = openHeaders(masterKey, current);
  return {
    ...settingsParameters(
      settings,
      sealedHeaders(masterKey, workspaceId, id, settings.config, headers, stored),
    ),
    id,
    at,
    keep_secret: secret === undefined ? 1 : 0,
    secret_sealed: typeof secret === "string" ? sealSecret(masterKey, workspaceId, id, secret) : null,
  };
}

/** D38, D39: what a create or an update left out, at its default. */
function withDefaults(input: SubscriptionSettingsInput): SubscriptionSettings {
  const { config } = input;
  return {
    ...input,
    config:
      config.channel === "webhook"
        ? {
            channel: "webhook",
            url: config.url,
            signatureScheme: config.signatureScheme ?? "service",
            headerNames: config.headerNames ?? [],
            propagateTraceContext: config.propagateTraceContext ?? false,
          }
        : config,
    eventTypes: input.eventTypes ?? [...defaultEventTypes],
    throttlePerSecond: input.throttlePerSecond ?? null,
  };
}

/**
 * The webhook's headers sealed as one JSON object (D38, D24): each of its headerNames with the value given
 * now, or else the one stored. Null when it has none, and for another channel.
 */
function sealedHeaders(
  masterKey: Buffer,
  workspaceId: string,
  id: string,
  config: ChannelConfig,
  given: HeaderValues,
  stored: HeaderValues,
): Buffer | null {
  if (config.channel !== "webhook" || config.headerNames.length === 0) return null;
  const headers = Object.fromEntries(
    config.headerNames.map((name) => {
      const value = ownValue(given, name) ?? ownValue(stored, name);
      if (value === undefined) throw new Error(`header ${name} of subscription ${id} has no value`);
      return [name, value];
    }),
  );
  return encryptSecret(masterKey, JSON.stringify(headers), headersContext(workspaceId, id));
}

function ownValue(values: HeaderValues, name: string): string | undefined {
  return Object.hasOwn(values, name) ? values[name] : undefined;
}

/** The row's headers with their values (D38): for delivery, and for an update that keeps some. */
function openHeaders(masterKey: Buffer, row: SubscriptionRow): Record<string, string> {
  if (row.headers_sealed === null) return {};
  const text = decryptSecret(masterKey, row.headers_sealed, headersContext(row.workspace_id, row.id));
  return JSON.parse(text) as Record<string, string>;
}

/** Binds the sealed headers to their subscription, apart from its secret's context (D24). */
function headersContext(workspaceId: string, id: string): string[] {
  return ["notification-subscription-headers", workspaceId, id];
}

/**
 * D33: whether the row still holds a replaced secret whose grace period has ended by `now`. Such a secret
 * never signs again (the delivery judges the grace period at each attempt); it is cleared from the row
 * when found, so an expired secret does not wait, sealed, for the next rotation.
 */
export function holdsExpiredSecret(row: SubscriptionRow, now: number): boolean {
  const expiresAt = row.previous_secret_expires_at;
  return row.previous_secret_sealed !== null && expiresAt !== null && expiresAt <= now;
}

/** The row as clearExpiredSecret leaves it. */
export function withoutPreviousSecret(row: SubscriptionRow): SubscriptionRow {
  return { ...row, previous_secret_sealed: null, previous_secret_expires_at: null };
}

/** The row with its secrets opened, for delivery only (D24). */
export function forDelivery(masterKey: Buffer, row: SubscriptionRow): SubscriptionForDelivery {
  // The replaced secret moved over sealed as it was, so it opens under the same context (D33, D24).
  const open = (sealed: Buffer | null) =>
    sealed === null
      ? null
      : decryptSecret(masterKey, sealed, subscriptionSecretContext(row.workspace_id, row.id));
  return {
    ...toRecord(row),
    secret: open(row.secret_sealed),
    previousSecret: open(row.previous_secret_sealed),
    headers: openHeaders(masterKey, row),
    deletedAt: row.deleted_at,
  };
}

export function sealSecret(masterKey: Buffer, workspaceId: string, id: string, secret: string): Buffer {
  return encryptSecret(masterKey, secret, subscriptionSecretContext(workspaceId, id));
}

/** Binds a ciphertext to its subscription: copied to another one, it fails to decrypt. */
function subscriptionSecretContext(workspaceId: string, id: string): string[] {
  return ["notification-subscription", workspaceId, id];
}

function settingsParameters(settings: SubscriptionSettings, headersSealed: Buffer | null) {
  const { channel, ...config } = settings.config;
  return {
    channel,
    config_json: JSON.stringify(config),
    all_workflows: settings.allWorkflows ? 1 : 0,
    workflow_ids_json: JSON.stringify(settings.workflowIds),
    level_filter_json: JSON.stringify(settings.levelFilter),
    trigger_filter_json: JSON.stringify(settings.triggerFilter),
    include_final_output: settings.include.finalOutput ? 1 : 0,
    include_trace_spans: settings.include.traceSpans ? 1 : 0,
    include_rate_limits: settings.include.rateLimits ? 1 : 0,
    include_usage_data: settings.include.usage ? 1 : 0,
    alert_rule_json: settings.alertRule === null ? null : JSON.stringify(settings.alertRule),
    active: settings.active ? 1 : 0,
    event_types_json: JSON.stringify(settings.eventTypes),
    throttle_per_second: settings.throttlePerSecond,
    headers_sealed: headersSealed,
  };
}

export function toRecord(row: SubscriptionRow): SubscriptionRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    config: configOf(row),
    allWorkflows: row.all_workflows === 1,
    workflowIds: JSON.parse(row.workflow_ids_json) as string[],
    levelFilter: JSON.parse(row.level_filter_json) as Level[],
    triggerFilter: JSON.parse(row.trigger_filter_json) as Trigger[],
    include: {
      finalOutput: row.include_final_output === 1,
      traceSpans: row.include_trace_spans === 1,
      rateLimits: row.include_rate_limits === 1,
      usage: row.include_usage_data === 1,
    },
    alertRule: row.alert_rule_json === null ? null : (JSON.parse(row.alert_rule_json) as AlertRuleRecord),
    active: row.active === 1,
    eventTypes: JSON.parse(row.event_types_json) as SubscribableEventType[],
    throttlePerSecond: row.throttle_per_second,
    hasSecret: row.secret_sealed !== null,
    previousSecretExpiresAt: row.previous_secret_sealed === null ? null : row.previous_secret_expires_at,
    failingSince: row.failing_since,
    failedDeliveries: row.failed_deliveries,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    holdState: row.hold_state,
    heldAt: row.held_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The channel's settings; a webhook stored before D39 signs with the service scheme and has no headers,
 * one stored before D50 sends no trace context.
 */
function configOf(row: SubscriptionRow): ChannelConfig {
  const config = { channel: row.channel, ...JSON.parse(row.config_json) } as ChannelConfig;
  if (config.channel !== "webhook") return config;
  return {
    ...config,
    signatureScheme: config.signatureScheme ?? "service",
    headerNames: config.headerNames ?? [],
    propagateTraceContext: config.propagateTraceContext ?? false,
  };
}
