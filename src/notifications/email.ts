import nodemailer, { type NodemailerError } from "nodemailer";
import { alertFiredEventType } from "../domain/event-types.js";
import { createRedactor } from "../outbound/redaction.js";
import { escapeHtml } from "../util/html.js";
import type { AlertFiredEvent, AlertResolvedEvent } from "./alert-event.js";
import { type DeliveryFailedEvent, deliveryFailedTitle } from "./delivery-failed-event.js";
import { type EndpointNoticeEvent, endpointFailingEventType } from "./endpoint-notice.js";
import { type CompletionEvent, logUrlOf } from "./event.js";
import { type HoldNoticeEvent, holdNoticeAdvice, holdNoticeTitle } from "./hold-notice.js";
import { type AttemptResult, snippetOfBytes } from "./http-channel.js";

/** A rendered notification e-mail: D20 sends both parts so every mail client shows the same facts. */
export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

export interface EmailOptions {
  workflowName: string;
  /** `FLOWLOG_PUBLIC_BASE_URL` (D4): the links in the mail must work from the reader's machine. */
  publicBaseUrl: string;
  /** The alert rule's human sentence (D21 `data.alert.reason`); turns the mail into an alert (D20). */
  alertReason?: string;
}

export interface EmailAttempt {
  /** `FLOWLOG_SMTP_URL`; may carry `user:password@`, which never leaves this function (D24). */
  smtpUrl: string | undefined;
  /** `FLOWLOG_MAIL_FROM`. */
  from: string;
  recipients: readonly string[];
  email: EmailContent;
  /** For the whole exchange, connecting included. */
  timeoutMs: number;
}

/** D20: up to 10 recipients per subscription. */
export const maxEmailRecipients = 10;

/** Big outputs would bury the summary and can exceed mail size limits; the log link has the full value. */
const jsonDisplayChars = 4_000;

const usd = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  // Agent calls cost fractions of a cent; two decimals would show most executions as $0.00.
  maximumFractionDigits: 6,
});

interface Row {
  label: string;
  value: string;
  href?: string;
}

interface JsonSection {
  title: string;
  json: string;
}

/**
 * The notification e-mail of one completion event (D20). Text and HTML are rendered from the same rows and
 * sections, so the two parts cannot say different things.
 */
/** The no-activity alert (D21) as an e-mail: the reason in the subject, as every alert's (D20). */
export function buildAlertFiredEmail(event: AlertFiredEvent): EmailContent {
  const { data } = event;
  const subject = `Alert: ${oneLine(data.workflowName)} - ${oneLine(data.alert.reason)}`;
  const rows: Row[] = [
    { label: "Workflow", value: data.workflowName },
    { label: "Alert", value: data.alert.reason },
    { label: "Rule", value: data.alert.rule },
    { label: "Last execution", value: data.lastExecutionAt ?? "never" },
    { label: "Fired", value: data.alert.firedAt },
    { label: "Workflow id", value: data.workflowId },
  ];
  return { subject, text: renderText(subject, rows, []), html: renderHtml(subject, rows, []) };
}

/**
 * D34: a firing is over. "Resolved:" leads the subject as "Alert:" leads a firing's, then the reason the
 * rule no longer holds; the body names the firing it ends.
 */
export function buildAlertResolvedEmail(event: AlertResolvedEvent): EmailContent {
  const { data } = event;
  const subject = `Resolved: ${oneLine(data.workflowName)} - ${oneLine(data.resolution.reason)}`;
  const rows: Row[] = [
    { label: "Workflow", value: data.workflowName },
    { label: "Resolved", value: data.resolution.reason },
    { label: "Rule", value: data.alert.rule },
    { label: "Resolved at", value: data.resolution.resolvedAt },
    { label: "Alert", value: data.alert.reason },
    { label: "Fired", value: data.alert.firedAt },
    { label: "Alert event", value: data.alert.eventId },
    { label: "Workflow id", value: data.workflowId },
  ];
  return { subject, text: renderText(subject, rows, []), html: renderHtml(subject, rows, []) };
}

/** D38's delivery.failed as an e-mail: which delivery failed, and how its series ended. */
export function buildDeliveryFailedEmail(event: DeliveryFailedEvent): EmailContent {
  const { data } = event;
  const subject = oneLine(deliveryFailedTitle(event));
  const rows: Row[] = [
    { label: "Delivery", value: data.deliveryId },
    { label: "Subscription", value: data.subscriptionId },
    { label: "Event", value: `${data.eventType} ${data.eventId}` },
    { label: "Series", value: String(data.series) },
    { label: "Attempts", value: String(data.attempts) },
    { label: "Last HTTP status", value: data.lastHttpStatus === null ? "none" : String(data.lastHttpStatus) },
    { label: "Last error", value: data.lastError ?? "none recorded" },
    { label: "Failed at", value: data.failedAt },
  ];
  return { subject, text: renderText(subject, rows, []), html: renderHtml(subject, rows, []) };
}

/** The e-mail of an event about an alert rather than an execution: a timer's firing, or a resolution. */
export function buildAlertEmail(event: AlertFiredEvent | AlertResolvedEvent): EmailContent {
  return event.type === alertFiredEventType ? buildAlertFiredEmail(event) : buildAlertResolvedEmail(event);
}

export function buildEmail(event: CompletionEvent, options: EmailOptions): EmailContent {
  const { data } = event;
  const outcome = data.status === "success" ? "succeeded" : "failed";
  const name = oneLine(options.workflowName);
  const subject =
    options.alertReason === undefined
      ? `Workflow ${name} ${outcome}`
      : `Alert: ${name} - ${oneLine(options.alertReason)}`;
  const logUrl = logUrlOf(options.publicBaseUrl, event);
  const rows: Row[] = [
    { label: "Workflow", value: options.workflowName },
    ...(options.alertReason === undefined ? [] : [{ label: "Alert", value: options.alertReason }]),
    { label: "Status", value: outcome },
    { label: "Trigger", value: data.trigger },
    { label: "Started", value: data.startedAt },
    { label: "Duration", value: humanDuration(data.totalDurationMs) },
    { label: "Cost", value: usd.format(data.cost.total) },
    { label: "Execution", value: data.executionId },
    { label: "Log", value: logUrl, href: logUrl },
  ];
  // Present only when the subscription's include flag put them in the event (spec "Event payload").
  const optional: Array<[string, unknown]> = [
    ["Final output", data.finalOutput],
    ["Rate limits", data.rateLimits],
    ["Usage", data.usage],
  ];
  const sections: JsonSection[] = optional.flatMap(([title, value]) =>
    value === undefined ? [] : [{ title, json: prettyJson(value) }],
  );
  return { subject, text: renderText(subject, rows, sections), html: renderHtml(subject, rows, sections) };
}

/**
 * D35's notices: the endpoint, its last error and when it is (or was) disabled, with what ends the run.
 * The subject says which of the two it is before anything else.
 */
export function buildEndpointNoticeEmail(event: EndpointNoticeEvent): EmailContent {
  const { data } = event;
  const failing = event.type === endpointFailingEventType;
  const subject = failing
    ? `Endpoint failing: ${oneLine(data.endpoint)} will be disabled at ${data.disabledAt}`
    : `Endpoint disabled: ${oneLine(data.endpoint)}`;
  const rows: Row[] = [
    { label: "Endpoint", value: data.endpoint },
    { label: "Channel", value: data.channel },
    { label: "Subscription", value: data.subscriptionId },
    { label: "Failing since", value: data.failingSince },
    { label: "Failed deliveries", value: String(data.failedDeliveries) },
    { label: "Last error", value: data.lastError ?? "none recorded" },
    { label: failing ? "To be disabled at" : "Disabled at", value: data.disabledAt },
    {
      label: "What to do",
      value: failing
        ? "Make the endpoint answer 2xx: one successful delivery resets the count."
        : "Fix the endpoint, then enable the subscription again (:enable), which resets the count.",
    },
  ];
  return { subject, text: renderText(subject, rows, []), html: renderHtml(subject, rows, []) };
}

/** D36's held, released and disabled events: the endpoint, its hold and what the owner can do. */
export function buildHoldNoticeEmail(event: HoldNoticeEvent): EmailContent {
  const { data } = event;
  const subject = oneLine(holdNoticeTitle(event));
  const rows: Row[] = [
    { label: "Endpoint", value: data.endpoint },
    { label: "Channel", value: data.channel },
    { label: "Subscription", value: data.subscriptionId },
    { label: "Held since", value: data.heldSince ?? "not held" },
    { label: "Held deliveries", value: String(data.heldDeliveries) },
    { label: "Last error", value: data.lastError ?? "none recorded" },
    { label: "What to do", value: holdNoticeAdvice(event) },
  ];
  return { subject, text: renderText(subject, rows, []), html: renderHtml(subject, rows, []) };
}

/**
 * One SMTP attempt (D20). Transient failures (4xx replies, connection errors, timeouts) are `retry`, so the
 * delivery follows the D19 schedule; 5xx replies and anything else are `failed`, since sending the same
 * message again would get the same answer.
 */
export async function sendEmailAttempt(attempt: EmailAttempt): Promise<AttemptResult> {
  const refuse = (error: string): AttemptResult => ({
    outcome: "failed",
    error,
    responseSnippet: "",
  });
  if (attempt.smtpUrl === undefined) return refuse("e-mail is not configured (FLOWLOG_SMTP_URL is not set)");
  const count = attempt.recipients.length;
  if (count < 1 || count > maxEmailRecipients) {
    return refuse(`an e-mail needs 1 to ${maxEmailRecipients} recipients, not ${count}`);
  }
  const redact = createRedactor(secretsOf(attempt.smtpUrl)).text;
  const transport = nodemailer.createTransport({
    url: attempt.smtpUrl,
    connectionTimeout: attempt.timeoutMs,
    greetingTimeout: attempt.timeoutMs,
    socketTimeout: attempt.timeoutMs,
  });
  try {
    const info = await transport.sendMail({
      from: attempt.from,
      to: [...attempt.recipients],
      ...attempt.email,
      signal: AbortSignal.timeout(attempt.timeoutMs),
    });
    // Some recipients refused while others accepted: the message is delivered, and sending it again would
    // duplicate it for everyone who got it (the D19 reasoning for 2xx); the refusals go in the record.
    const refused = (info.rejectedErrors ?? []).map(
      (error) => `rejected ${error.recipient}: ${error.response}`,
    );
    const response = [info.response, ...refused].join("\n");
    return {
      outcome: "succeeded",
      responseSnippet: snippetOfBytes(Buffer.from(redact(response))),
    };
  } catch (error) {
    const failure = error as NodemailerError;
    const message =
      failure.code === "EABORT" ? `no complete answer within ${attempt.timeoutMs} ms` : failure.message;
    return {
      outcome: isTransient(failure) ? "retry" : "failed",
      error: redact(message || String(error)),
      responseSnippet: snippetOfBytes(Buffer.from(redact(failure.response ?? ""))),
    };
  } finally {
    transport.close();
  }
}

/** Codes nodemailer gives errors that ended the connection rather than an SMTP reply that refused the mail. */
const transientCodes = new Set(["ECONNECTION", "ESOCKET", "ETIMEDOUT", "EDNS", "EABORT"]);

function isTransient(error: NodemailerError): boolean {
  if (error.responseCode !== undefined) return error.responseCode >= 400 && error.responseCode < 500;
  return error.code !== undefined && transientCodes.has(error.code);
}

/** The password in every form it could be echoed in: as typed in the URL and percent-decoded (D24). */
function secretsOf(smtpUrl: string): string[] {
  let password = "";
  try {
    password = new URL(smtpUrl).password;
  } catch {
    // Config validation (D4) rejects such a URL; should one get here, the whole URL is what gets redacted.
  }
  if (password === "") return [smtpUrl];
  let decoded = password;
  try {
    decoded = decodeURIComponent(password);
  } catch {
    // A malformed escape is still the raw password, which is already listed.
  }
  return [smtpUrl, password, decoded];
}

/** A header is one line: a name with a line break must not add headers or break the subject. */
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is being removed.
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ").trim();
}

function humanDuration(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 3_600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3_600)} h ${Math.floor((seconds % 3_600) / 60)} min`;
}

function prettyJson(value: unknown): string {
  const json = JSON.stringify(value, null, 2) ?? "null";
  if (json.length <= jsonDisplayChars) return json;
  // Cutting between the halves of a surrogate pair would leave an invalid character at the end.
  const cut = json.slice(0, jsonDisplayChars).replace(/[\uD800-\uDBFF]$/, "");
  return `${cut}\n… (truncated: ${json.length - cut.length} more characters; the log has the full value)`;
}

function renderText(subject: string, rows: readonly Row[], sections: readonly JsonSection[]): string {
  const width = Math.max(...rows.map((row) => row.label.length)) + 1;
  const lines = [subject, "", ...rows.map((row) => `${`${row.label}:`.padEnd(width)} ${row.value}`)];
  for (const section of sections)
    lines.push("", section.title, "-".repeat(section.title.length), section.json);
  return `${lines.join("\n")}\n`;
}

function renderHtml(subject: string, rows: readonly Row[], sections: readonly JsonSection[]): string {
  const cell = "padding:4px 12px 4px 0;vertical-align:top";
  const tableRows = rows.map((row) => {
    const value =
      row.href === undefined
        ? escapeHtml(row.value)
        : `<a href="${escapeHtml(row.href)}">${escapeHtml(row.value)}</a>`;
    return `<tr><th style="${cell};text-align:left">${escapeHtml(row.label)}</th><td style="${cell}">${value}</td></tr>`;
  });
  const blocks = sections.map(
    (section) =>
      `<h3>${escapeHtml(section.title)}</h3>\n<pre style="background:#f6f8fa;padding:8px;white-space:pre-wrap">${escapeHtml(section.json)}</pre>`,
  );
  return [
    "<!doctype html>",
    `<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family:sans-serif">',
    `<h2>${escapeHtml(subject)}</h2>`,
    `<table>\n${tableRows.join("\n")}\n</table>`,
    ...blocks,
    "</body></html>",
    "",
  ].join("\n");
}

/** Workflow names, outputs and reasons are user data: in HTML they must stay text (no markup, no script). */
