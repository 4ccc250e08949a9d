import type {
  AlertRule,
  EmailChannel,
  NotificationSubscription,
  WebhookChannel,
} from "../../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import {
  type AlertRuleRecord,
  alertRuleNames,
  alertRules,
  type NumberRange,
} from "../../domain/alert-rules.js";
import { type FieldViolation, invalidArgument, listLengthViolations } from "../../errors/api-errors.js";
import { parseOutboundUrl } from "../../outbound/url-policy.js";
import { newSecretToken } from "../../security/tokens.js";
import type { Level, Trigger } from "../../store/records.js";
import {
  type Channel,
  type ChannelConfig,
  channels,
  type SecretChange,
  type SubscriptionRecord,
  type SubscriptionSettings,
} from "../../store/subscriptions-store.js";

/** What a create or an update stores. */
export interface ResolvedSettings {
  settings: SubscriptionSettings;
  secret: SecretChange;
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
  };
  if (violations.length > 0 || !destination?.config) throw invalidArgument(violations);
  const { config, secret, generatedSecret } = destination;
  return { settings: { ...settings, config }, secret, ...(generatedSecret && { generatedSecret }) };
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
    if (current?.config.channel === channel) return { config: current.config, secret: undefined };
    violations.push({ field: channel, message: `${channel} is required for the ${channel} channel` });
    return { secret: null };
  }
  // Another channel never keeps a webhook secret.
  if (channel === "email")
    return { config: { channel, recipients: (input.email as EmailChannel).recipients }, secret: null };
  if (channel === "slack") {
    const url = checkedUrl("slack.url", input.slack?.url ?? "", violations);
    return { config: { channel, url }, secret: null };
  }
  return webhookDestination(input.webhook as WebhookChannel, violations);
}

/**
 * A given secret replaces the stored one ("" removes it); generateSecret makes one; neither keeps it. Its
 * length is declared in the .proto.
 */
function webhookDestination(webhook: WebhookChannel, violations: FieldViolation[]): Destination {
  const config: ChannelConfig = {
    channel: "webhook",
    url: checkedUrl("webhook.url", webhook.url, violations),
  };
  const { secret, generateSecret } = webhook;
  if (secret !== undefined && generateSecret) {
    violations.push({
      field: "webhook.secret",
      message: "give webhook.secret or webhook.generateSecret, not both",
    });
  }
  if (generateSecret) {
    const generatedSecret = newSecretToken("whsec");
    return { config, secret: generatedSecret, generatedSecret };
  }
  return { config, secret: secret === "" ? null : secret };
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
