import { alertFiredEventType, alertResolvedEventType } from "../domain/event-types.js";
import type { AlertFiredEvent, AlertResolvedEvent } from "./alert-event.js";
import {
  type DeliveryFailedEvent,
  deliveryFailedTitle,
  isDeliveryFailedEvent,
} from "./delivery-failed-event.js";
import type { CompletionEvent } from "./event.js";
import {
  type HoldNoticeEvent,
  holdNoticeAdvice,
  holdNoticeTitle,
  isHoldNotice,
  subscriptionReleasedEventType,
} from "./hold-notice.js";
import { type AttemptResult, postJson } from "./http-channel.js";

/** Slack's documented Block Kit limits the message is built to (D20). */
export const slackLimits = {
  blocks: 50,
  headerText: 150,
  sectionText: 3000,
  fieldText: 2000,
  fields: 10,
  buttonText: 75,
  buttonUrl: 3000,
} as const;

interface TextObject {
  type: "plain_text" | "mrkdwn";
  text: string;
}

export type SlackBlock =
  | { type: "header"; text: TextObject }
  | { type: "section"; text?: TextObject; fields?: TextObject[] }
  | { type: "context"; elements: TextObject[] }
  | { type: "actions"; elements: Array<{ type: "button"; text: TextObject; url: string }> };

/**
 * An incoming-webhook message (D20). The title is a top-level block; the details sit in one attachment so
 * they carry the outcome's colour bar, which only attachments have. `text` is the fallback that
 * notifications, screen readers and Slack-compatible servers without Block Kit (Mattermost) show.
 */
export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
  attachments: Array<{ color: "good" | "danger"; fallback: string; blocks: SlackBlock[] }>;
}

export interface SlackMessageContext {
  workflowName: string;
  /** `{base_url}/api/v1/logs/<id>` (D20), from logUrlOf. */
  logUrl: string;
}

export function buildSlackMessage(event: CompletionEvent, context: SlackMessageContext): SlackMessage {
  const { data } = event;
  const succeeded = data.status === "success";
  const { alert } = data;
  // An alert leads with its reason (D20, D21), as the e-mail subject does.
  const title = alert
    ? `Alert: ${context.workflowName} - ${alert.reason}`
    : `Workflow ${context.workflowName} ${succeeded ? "succeeded" : "failed"}`;
  const duration = formatDuration(data.totalDurationMs);
  const cost = `$${data.cost.total.toFixed(4)} (${data.cost.tokens.total} tokens)`;
  const details: SlackBlock[] = [
    ...(alert
      ? [
          {
            type: "section" as const,
            text: mrkdwn(truncated(`*${escaped(alert.reason)}*`, slackLimits.sectionText)),
          },
        ]
      : []),
    {
      type: "section",
      fields: [
        field("Status", data.status),
        field("Trigger", data.trigger),
        field("Duration", duration),
        field("Cost", cost),
      ],
    },
  ];
  if ("finalOutput" in data) details.push(finalOutputSection(data.finalOutput));
  details.push(
    {
      type: "context",
      elements: [mrkdwn(`Execution ${escaped(data.executionId)} · started ${data.startedAt}`)],
    },
    {
      type: "actions",
      elements: [{ type: "button", text: { type: "plain_text", text: "View log" }, url: context.logUrl }],
    },
  );
  const fallback = `${escaped(title)}: ${data.trigger}, ${duration}, ${cost}. <${context.logUrl}|View log>`;
  return {
    text: fallback,
    blocks: [
      { type: "header", text: { type: "plain_text", text: truncated(title, slackLimits.headerText) } },
    ],
    attachments: [{ color: succeeded ? "good" : "danger", fallback, blocks: details }],
  };
}

export interface SlackAttempt extends SlackMessageContext {
  /** The incoming-webhook URL; it is the credential, so it never appears in an error (D24). */
  url: string;
  event: CompletionEvent | AlertFiredEvent | AlertResolvedEvent | DeliveryFailedEvent | HoldNoticeEvent;
  allowPrivateNetworks: boolean;
  /** D26: quotas.replyBytes.delivery. */
  replyLimitBytes: number;
  timeoutMs?: number;
  now?: () => number;
}

/** The no-activity alert (D21) as a chat message: the reason leads, as every alert's does (D20). */
export function buildSlackAlertMessage(event: AlertFiredEvent): SlackMessage {
  const { data } = event;
  const title = `Alert: ${data.workflowName} - ${data.alert.reason}`;
  const fallback = escaped(title);
  const details: SlackBlock[] = [
    { type: "section", text: mrkdwn(truncated(`*${escaped(data.alert.reason)}*`, slackLimits.sectionText)) },
    {
      type: "section",
      fields: [
        field("Rule", data.alert.rule),
        field("Threshold", `${data.alert.threshold} h`),
        field("Silent for", `${data.alert.observed} h`),
        field("Last execution", data.lastExecutionAt ?? "never"),
      ],
    },
  ];
  return {
    text: fallback,
    blocks: [
      { type: "header", text: { type: "plain_text", text: truncated(title, slackLimits.headerText) } },
    ],
    attachments: [{ color: "danger", fallback, blocks: details }],
  };
}

/** D34: a firing is over, in green; "Resolved:" and the reason lead, as "Alert:" leads a firing's. */
export function buildSlackResolvedMessage(event: AlertResolvedEvent): SlackMessage {
  const { data } = event;
  const title = `Resolved: ${data.workflowName} - ${data.resolution.reason}`;
  const fallback = escaped(title);
  const details: SlackBlock[] = [
    {
      type: "section",
      text: mrkdwn(truncated(`*${escaped(data.resolution.reason)}*`, slackLimits.sectionText)),
    },
    {
      type: "section",
      fields: [
        field("Rule", data.alert.rule),
        field("Resolved at", data.resolution.resolvedAt),
        field("Alert", data.alert.reason),
        field("Fired", data.alert.firedAt),
      ],
    },
    { type: "context", elements: [mrkdwn(`Alert event ${escaped(data.alert.eventId)}`)] },
  ];
  return {
    text: fallback,
    blocks: [
      { type: "header", text: { type: "plain_text", text: truncated(title, slackLimits.headerText) } },
    ],
    attachments: [{ color: "good", fallback, blocks: details }],
  };
}

/** D38's delivery.failed as a chat message, in red: which delivery failed, and its last answer. */
export function buildSlackDeliveryFailedMessage(event: DeliveryFailedEvent): SlackMessage {
  const { data } = event;
  const title = deliveryFailedTitle(event);
  const fallback = escaped(title);
  const details: SlackBlock[] = [
    {
      type: "section",
      text: mrkdwn(truncated(`*${escaped(data.lastError ?? "no error recorded")}*`, slackLimits.sectionText)),
    },
    {
      type: "section",
      fields: [
        field("Delivery", data.deliveryId),
        field("Subscription", data.subscriptionId),
        field("Event", `${data.eventType} ${data.eventId}`),
        field("Series", String(data.series)),
        field("Attempts", String(data.attempts)),
        field("Failed at", data.failedAt),
      ],
    },
  ];
  return {
    text: fallback,
    blocks: [
      { type: "header", text: { type: "plain_text", text: truncated(title, slackLimits.headerText) } },
    ],
    attachments: [{ color: "danger", fallback, blocks: details }],
  };
}

/** D36's held, released and disabled events as a chat message: red while held, green once released. */
export function buildSlackHoldMessage(event: HoldNoticeEvent): SlackMessage {
  const { data } = event;
  const title = holdNoticeTitle(event);
  const fallback = escaped(title);
  const details: SlackBlock[] = [
    { type: "section", text: mrkdwn(truncated(escaped(holdNoticeAdvice(event)), slackLimits.sectionText)) },
    {
      type: "section",
      fields: [
        field("Subscription", data.subscriptionId),
        field("Held since", data.heldSince ?? "not held"),
        field("Held deliveries", String(data.heldDeliveries)),
        field("Last error", data.lastError ?? "none recorded"),
      ],
    },
  ];
  return {
    text: fallback,
    blocks: [
      { type: "header", text: { type: "plain_text", text: truncated(title, slackLimits.headerText) } },
    ],
    attachments: [
      { color: event.type === subscriptionReleasedEventType ? "good" : "danger", fallback, blocks: details },
    ],
  };
}

/**
 * One chat attempt, through the same plumbing and classification as webhooks (D20): Slack acknowledges with
 * 200 "ok", answers 429 and 5xx when it wants a retry, and 4xx (invalid_payload, no_service, ...) otherwise.
 */
export function sendSlackAttempt(attempt: SlackAttempt): Promise<AttemptResult> {
  const { event } = attempt;
  const message = isDeliveryFailedEvent(event)
    ? buildSlackDeliveryFailedMessage(event)
    : isHoldNotice(event)
      ? buildSlackHoldMessage(event)
      : event.type === alertFiredEventType
        ? buildSlackAlertMessage(event)
        : event.type === alertResolvedEventType
          ? buildSlackResolvedMessage(event)
          : buildSlackMessage(event, attempt);
  return postJson(attempt.url, JSON.stringify(message), {
    allowPrivateNetworks: attempt.allowPrivateNetworks,
    replyLimitBytes: attempt.replyLimitBytes,
    timeoutMs: attempt.timeoutMs,
    now: attempt.now,
  });
}

function mrkdwn(text: string): TextObject {
  return { type: "mrkdwn", text };
}

function field(label: string, value: string): TextObject {
  return mrkdwn(truncated(`*${label}*\n${escaped(value)}`, slackLimits.fieldText));
}

const codeFence = "```";

/** The output as JSON in a code block, cut to fit one section (3000 characters) with the fences. */
function finalOutputSection(output: unknown): SlackBlock {
  const heading = "*Final output*\n";
  const budget = slackLimits.sectionText - heading.length - 2 * (codeFence.length + 1);
  // A fence inside the output would end the code block early; a zero-width space keeps it inert.
  const json = (JSON.stringify(output, null, 2) ?? "null").replaceAll(codeFence, "`\u200b`\u200b`");
  return {
    type: "section",
    text: mrkdwn(`${heading}${codeFence}\n${truncated(escaped(json), budget)}\n${codeFence}`),
  };
}

/** Slack reads &, < and > as control characters in every text object. */
function escaped(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/**
 * At most `limit` UTF-16 units (Slack counts characters the way JavaScript does), cut between code points
 * so no surrogate pair is split, and never inside an `&amp;`-style entity.
 */
function truncated(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const ellipsis = "…";
  let cut = "";
  for (const codePoint of text) {
    if (cut.length + codePoint.length > limit - ellipsis.length) break;
    cut += codePoint;
  }
  return `${cut.replace(/&[a-z]*$/, "")}${ellipsis}`;
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.floor((ms % 60_000) / 1000)} s`;
}
