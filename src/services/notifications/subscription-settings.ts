import { getOption } from "@bufbuild/protobuf";
import { field as fieldRules } from "../../../gen/buf/validate/validate_pb.js";
import {
  type AlertRule,
  type EmailChannel,
  type NotificationSubscription,
  type WebhookChannel,
  WebhookChannelSchema,
} from "../../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import {
  type AlertRuleRecord,
  alertRuleNames,
  alertRules,
  type NumberRange,
} from "../../domain/alert-rules.js";
import { defaultEventTypes, type SubscribableEventType } from "../../domain/event-types.js";
import { type FieldViolation, invalidArgument, listLengthViolations } from "../../errors/api-errors.js";
import { newStandardSecret, standardSecretProblem } from "../../notifications/standard-webhooks.js";
import { reservedHeaderProblem } from "../../notifications/webhook-headers.js";
import { parseOutboundUrl } from "../../outbound/url-policy.js";
import { newSecretToken } from "../../security/tokens.js";
import type { Level, Trigger } from "../../store/records.js";
import {
  type Channel,
  type ChannelConfig,
  channels,
  type HeaderValues,
  type SecretChange,
  type SignatureScheme,
  type SubscriptionRecord,
  type SubscriptionSettings,
  type WebhookConfig,
} from "../../store/subscriptions-store.js";

/** What a create or an update stores. */
export interface ResolvedSettings {
  settings: SubscriptionSettings;
  secret: SecretChange;
  /** D38: the webhook header values this request gives, by lower-case name; the others keep theirs. */
  headers: HeaderValues;
  /** A webhook secret generated for this request: shown in its response only (D18, D24). */
  generatedSecret?: string;
}

/**
 * The settings a create (no current subscription) or an update results in: what the input sets changes,
 * the rest keeps its current value (the rules are in the .proto, at UpdateSubscriptionRequest). Every bad
 * field is reported at once, named relative to the subscription; nothing reaches the store otherwise.
 * Each list holds at most `maxListValues` values (D26).
 */
export function resolveSettings(
  input: NotificationSubscription,
  current: SubscriptionRecord | undefined,
  isLiveWorkflow: (workflowId: string) => boolean,
  maxListValues: number,
  /** Fields an update mask names (proto names): replaced as given, so an empty filter means all again. */
  replaced: ReadonlySet<string> = new Set(),
): ResolvedSettings {
  const violations: FieldViolation[] = [
    ...listLengthViolations("workflowIds", input.workflowIds, maxListValues),
    ...listLengthViolations("levelFilter", input.levelFilter, maxListValues),
    ...listLengthViolations("triggerFilter", input.triggerFilter, maxListValues),
    ...listLengthViolations("eventTypes", input.eventTypes, maxListValues),
  ];
  // Past the limit, a list is refused whole: one violation, not one per value.
  if (violations.length > 0) throw invalidArgument(violations);
  const channel = channelOf(input, current, violations);
  const destination = channel && destinationOf(channel, input, current, violations);
  const settings = {
    ...selectionOf(input, current, isLiveWorkflow, violations),
    levelFilter: filterOf<Level>(
      input.levelFilter,
      replaced.has("level_filter") ? undefined : current?.levelFilter,
    ),
    triggerFilter: filterOf<Trigger>(
      input.triggerFilter,
      replaced.has("trigger_filter") ? undefined : current?.triggerFilter,
    ),
    include: {
      finalOutput: input.includeFinalOutput ?? current?.include.finalOutput ?? false,
      traceSpans: input.includeTraceSpans ?? current?.include.traceSpans ?? false,
      rateLimits: input.includeRateLimits ?? current?.include.rateLimits ?? false,
      usage: input.includeUsageData ?? current?.include.usage ?? false,
    },
    alertRule: alertRuleOf(input.alertRule, current?.alertRule, violations),
    active: input.active ?? current?.active ?? true,
    eventTypes: eventTypesOf(input.eventTypes, replaced.has("event_types") ? undefined : current?.eventTypes),
    throttlePerSecond: throttleOf(input.throttlePerSecond, current, replaced.has("throttle_per_second")),
  };
  if (violations.length > 0 || !destination?.config) throw invalidArgument(violations);
  const { config, secret, headers, generatedSecret } = destination;
  return { settings: { ...settings, config }, secret, headers, ...(generatedSecret && { generatedSecret }) };
}

/**
 * D38: the given types, once each; none given keeps the current ones (or, named by the update mask, goes
 * back to the default), and a create without any gets the default. The types allowed are the .proto's.
 */
function eventTypesOf(given: string[], kept: SubscribableEventType[] | undefined): SubscribableEventType[] {
  if (given.length === 0) return kept ?? [...defaultEventTypes];
  return [...new Set(given)] as SubscribableEventType[];
}

/**
 * D38: deliveries a second, 1 to 1000 (the .proto's bound); 0 removes the pace, and so does an update
 * mask naming the field without a value. Left out otherwise, the current pace stays.
 */
function throttleOf(
  given: number | undefined,
  current: SubscriptionRecord | undefined,
  replaced: boolean,
): number | null {
  if (given === undefined) return replaced ? null : (current?.throttlePerSecond ?? null);
  return given === 0 ? null : given;
}

function channelOf(
  input: NotificationSubscription,
  current: SubscriptionRecord | undefined,
  violations: FieldViolation[],
): Channel | undefined {
  // The .proto declares the values a given channel may take; a create must give one.
  const channel = input.channel || current?.config.channel;
  if (isOneOf(channels, channel)) return channel;
  violations.push({ field: "channel", message: "channel is required" });
  return undefined;
}

interface Destination {
  config?: ChannelConfig;
  secret: SecretChange;
  headers: HeaderValues;
  generatedSecret?: string;
}

/** Exactly the settings of the subscription's channel; left out in an update, the current ones stay. */
function destinationOf(
  channel: Channel,
  input: NotificationSubscription,
  current: SubscriptionRecord | undefined,
  violations: FieldViolation[],
): Destination {
  for (const other of channels) {
    if (other !== channel && input[other] !== undefined) {
      violations.push({ field: other, message: `${other} is only for the ${other} channel, not ${channel}` });
    }
  }
  if (input[channel] === undefined) {
    if (current?.config.channel === channel)
      return { config: current.config, secret: undefined, headers: {} };
    violations.push({ field: channel, message: `${channel} is required for the ${channel} channel` });
    return { secret: null, headers: {} };
  }
  // Another channel never keeps a webhook secret, nor its headers.
  if (channel === "email")
    return {
      config: { channel, recipients: (input.email as EmailChannel).recipients },
      secret: null,
      headers: {},
    };
  if (channel === "slack") {
    const url = checkedUrl("slack.url", input.slack?.url ?? "", violations);
    return { config: { channel, url }, secret: null, headers: {} };
  }
  const kept =
    current?.config.channel === "webhook" ? { ...current.config, hasSecret: current.hasSecret } : undefined;
  return webhookDestination(input.webhook as WebhookChannel, kept, violations);
}

/** The webhook a subscription has now, with whether it has a secret; undefined for another channel. */
type CurrentWebhook = WebhookConfig & { hasSecret: boolean };

/**
 * A given secret replaces the stored one ("" removes it); generateSecret makes one; neither keeps it. Its
 * length is declared in the .proto; with the standard scheme it must be a whsec_ key (D39), which is why
 * changing the scheme of a signed webhook takes a new secret in the same request. Left out, the scheme
 * stays; the headers change by name (webhookHeaders).
 */
function webhookDestination(
  webhook: WebhookChannel,
  current: CurrentWebhook | undefined,
  violations: FieldViolation[],
): Destination {
  const signatureScheme = (webhook.signatureScheme ??
    current?.signatureScheme ??
    "service") as SignatureScheme;
  const { names, values } = webhookHeaders(webhook.headers, current?.headerNames ?? [], violations);
  const config: ChannelConfig = {
    channel: "webhook",
    url: checkedUrl("webhook.url", webhook.url, violations),
    signatureScheme,
    headerNames: names,
    // D50: off unless asked; left out of an update, it stays.
    propagateTraceContext: webhook.propagateTraceContext ?? current?.propagateTraceContext ?? false,
  };
  const { secret, generateSecret } = webhook;
  if (secret !== undefined && generateSecret) {
    violations.push({
      field: "webhook.secret",
      message: "give webhook.secret or webhook.generateSecret, not both",
    });
  }
  const standard = signatureScheme === "standard";
  if (generateSecret) {
    const generatedSecret = standard ? newStandardSecret() : newSecretToken("whsec");
    return { config, secret: generatedSecret, headers: values, generatedSecret };
  }
  if (secret === undefined && current?.hasSecret && signatureScheme !== current.signatureScheme) {
    violations.push({
      field: "webhook.signatureScheme",
      message:
        `webhook.signatureScheme ${signatureScheme} needs a new secret in the same request ` +
        "(webhook.secret or webhook.generateSecret): a secret belongs to its scheme (D39)",
    });
  }
  const problem = standard && secret ? standardSecretProblem(secret) : undefined;
  if (problem) violations.push({ field: "webhook.secret", message: `webhook.secret ${problem}` });
  return { config, secret: secret === "" ? null : secret, headers: values };
}

/** D38: at most this many headers per webhook, as the .proto bounds one request's map. */
const maxWebhookHeaders = Number(
  (getOption(WebhookChannelSchema.field.headers, fieldRules).type.value as { maxPairs: bigint }).maxPairs,
);

/**
 * D38: the webhook's header names after this request, and the values it gives, by lower-case name. A name
 * given with a value sets it, one given with "" removes it, the current ones not given stay. Names and
 * values are shaped by the .proto; the ones the delivery sets itself are refused here, like a name given
 * twice in different cases, and so is a result over the bound.
 */
function webhookHeaders(
  given: Record<string, string>,
  current: readonly string[],
  violations: FieldViolation[],
): { names: string[]; values: HeaderValues } {
  const names = new Set(current);
  const values: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [givenName, value] of Object.entries(given)) {
    const field = `webhook.headers.${givenName}`;
    const name = givenName.toLowerCase();
    const problem = seen.has(name)
      ? `repeats ${name}: header names are compared in lower case`
      : reservedHeaderProblem(name);
    seen.add(name);
    if (problem) violations.push({ field, message: `${field}: ${problem}` });
    else if (value === "") names.delete(name);
    else {
      names.add(name);
      values[name] = value;
    }
  }
  if (names.size > maxWebhookHeaders) {
    violations.push({
      field: "webhook.headers",
      message: `webhook.headers would hold ${names.size} headers; a webhook has at most ${maxWebhookHeaders} (D38)`,
    });
  }
  return { names: [...names].sort(), values };
}

/**
 * Where a delivery may go (D19, D20): the outbound URL policy every request flowlog sends is held to. That
 * the URL is given, absolute and at most 2048 characters is declared in the .proto.
 */
function checkedUrl(field: string, value: string, violations: FieldViolation[]): string {
  const url = parseOutboundUrl(value);
  if ("problem" in url) violations.push({ field, message: `${field} ${url.problem}` });
  return value;
}

/** allWorkflows true selects every current and future workflow; otherwise named live workflows. */
function selectionOf(
  input: NotificationSubscription,
  current: SubscriptionRecord | undefined,
  isLiveWorkflow: (workflowId: string) => boolean,
  violations: FieldViolation[],
): Pick<SubscriptionSettings, "allWorkflows" | "workflowIds"> {
  const ids = input.workflowIds;
  if (input.allWorkflows) {
    if (ids.length > 0)
      violations.push({
        field: "workflowIds",
        message: "workflowIds must be empty when allWorkflows is true",
      });
    return { allWorkflows: true, workflowIds: [] };
  }
  if (ids.length === 0) {
    const switchesFromAll = input.allWorkflows === false && current?.allWorkflows;
    if (current && !switchesFromAll)
      return { allWorkflows: current.allWorkflows, workflowIds: current.workflowIds };
    violations.push({
      field: "workflowIds",
      message: "workflowIds must name at least one workflow, or allWorkflows must be true",
    });
    return { allWorkflows: false, workflowIds: [] };
  }
  ids.forEach((id, index) => {
    const field = `workflowIds[${index}]`;
    if (ids.indexOf(id) !== index) violations.push({ field, message: `${field} repeats workflow ${id}` });
    else if (!isLiveWorkflow(id))
      violations.push({ field, message: `${field}: workflow ${id} does not exist in this workspace` });
  });
  return { allWorkflows: false, workflowIds: ids };
}

/** An empty filter means all (D18); in an update without a mask naming it, an empty list keeps the current filter. */
function filterOf<T extends string>(given: string[], kept: T[] | undefined): T[] {
  // The values a filter may hold are declared in the .proto.
  if (given.length === 0) return kept ?? [];
  return [...new Set(given)] as T[];
}

/** Given in an update, the rule replaces the current one; with an empty rule it removes it. */
function alertRuleOf(
  given: AlertRule | undefined,
  kept: AlertRuleRecord | null | undefined,
  violations: FieldViolation[],
): AlertRuleRecord | null {
  if (given === undefined) return kept ?? null;
  const { rule, threshold, windowHours } = given;
  if (rule === "" && threshold === 0 && windowHours === undefined) return null;
  if (!isOneOf(alertRuleNames, rule)) {
    violations.push({
      field: "alertRule.rule",
      message: `alertRule.rule ${rule === "" ? "is required" : "must be"}: one of ${alertRuleNames.join(", ")}`,
    });
    return null;
  }
  // The rule's fields, their units and ranges are its entry in the alert-rule table (D21).
  const fields = alertRules[rule];
  const thresholdProblem = rangeProblem(threshold, fields.threshold.range);
  if (thresholdProblem) {
    violations.push({
      field: "alertRule.threshold",
      message: `alertRule.threshold of ${rule} is ${fields.threshold.described}: ${thresholdProblem}`,
    });
  }
  if (fields.windowHours) {
    const windowProblem =
      windowHours === undefined ? "it is required" : rangeProblem(windowHours, fields.windowHours.range);
    if (windowProblem) {
      violations.push({
        field: "alertRule.windowHours",
        message: `alertRule.windowHours of ${rule} is ${fields.windowHours.described}: ${windowProblem}`,
      });
    }
  } else if (windowHours !== undefined) {
    violations.push({ field: "alertRule.windowHours", message: `${rule} takes no alertRule.windowHours` });
  }
  return { rule, threshold, windowHours: windowHours ?? null };
}

function rangeProblem(value: number, range: NumberRange): string | undefined {
  if (!Number.isFinite(value)) return "it must be a finite number";
  if (range.integer && !Number.isInteger(value)) return "it must be a whole number";
  if (range.above !== undefined && value <= range.above) return `it must be greater than ${range.above}`;
  if (range.min !== undefined && value < range.min) return `it must be at least ${range.min}`;
  if (range.max !== undefined && value > range.max) return `it must be at most ${range.max}`;
  return undefined;
}

function isOneOf<T extends string>(allowed: readonly T[], value: string | undefined): value is T {
  return (allowed as readonly (string | undefined)[]).includes(value);
}
