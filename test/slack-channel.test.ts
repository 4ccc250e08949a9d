import { describe, expect, it } from "vitest";
import { defaultQuotas } from "../src/limits/quotas.js";
import { buildAlertFiredEvent } from "../src/notifications/alert-event.js";
import { buildDeliveryFailedEvent } from "../src/notifications/delivery-failed-event.js";
import { buildCompletionEvent, type CompletionEvent, logUrlOf } from "../src/notifications/event.js";
import {
  buildSlackAlertMessage,
  buildSlackDeliveryFailedMessage,
  buildSlackMessage,
  type SlackBlock,
  type SlackMessage,
  sendSlackAttempt,
  slackLimits,
} from "../src/notifications/slack.js";
import type { LogEntryRecord } from "../src/store/records.js";
import { receiversClosedAfterEach } from "./support/http-receiver.js";

const receiver = receiversClosedAfterEach();

const failedDeliveryEvent = buildDeliveryFailedEvent(
  {
    id: "dlv_lost",
    eventId: "evt_lost",
    eventType: "workflow.execution.completed",
    subscriptionId: "sub_hook",
    workspaceId: "ws_1",
    logId: "log_9",
    status: "failed",
    attempts: 5,
    lastError: "the receiver answered 503 <html>",
    lastHttpStatus: 503,
    createdAt: Date.parse("2026-11-22T06:00:00.000Z"),
    updatedAt: Date.parse("2026-11-22T06:04:30.000Z"),
  },
  1,
  [],
);

const tokens = { prompt: 1000, completion: 234, total: 1234 };
const entry: LogEntryRecord = {
  id: "log_9",
  workspaceId: "ws_1",
  workflowId: "wf_1",
  folderId: null,
  executionId: "ex_9",
  billedUserId: null,
  level: "info",
  trigger: "schedule",
  startedAt: 1767323045000,
  endedAt: 1767323047500,
  totalDurationMs: 2500,
  cost: { total: 0.0123, tokens, models: {} },
  files: null,
  traceSpans: [],
  finalOutput: { summary: "all good" },
};

function eventOf(overrides: Partial<LogEntryRecord> = {}, finalOutput = true): CompletionEvent {
  return buildCompletionEvent({
    eventId: "evt_9",
    timestampMs: 1767323047600,
    entry: { ...entry, ...overrides },
    include: { finalOutput, traceSpans: false, rateLimits: false, usage: false },
  });
}

const logUrl = logUrlOf("https://flowlog.example", eventOf());
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Slack's documented Block Kit limits, checked on every text object of the message. */
function expectValidBlockKit(message: SlackMessage): void {
  const blocks: SlackBlock[] = [
    ...message.blocks,
    ...message.attachments.flatMap((attachment) => attachment.blocks),
  ];
  expect(blocks.length).toBeLessThanOrEqual(slackLimits.blocks);
  expect(typeof message.text).toBe("string");
  expect(message.text.length).toBeGreaterThan(0);
  for (const block of blocks) {
    expect(["header", "section", "context", "actions"]).toContain(block.type);
    const texts = [];
    if (block.type === "header") {
      expect(block.text.type).toBe("plain_text");
      expect(block.text.text.length).toBeLessThanOrEqual(slackLimits.headerText);
      texts.push(block.text);
    }
    if (block.type === "section") {
      expect(block.text ?? block.fields).toBeDefined();
      if (block.text) expect(block.text.text.length).toBeLessThanOrEqual(slackLimits.sectionText);
      expect(block.fields?.length ?? 0).toBeLessThanOrEqual(slackLimits.fields);
      for (const field of block.fields ?? [])
        expect(field.text.length).toBeLessThanOrEqual(slackLimits.fieldText);
      texts.push(...(block.text ? [block.text] : []), ...(block.fields ?? []));
    }
    if (block.type === "context") {
      expect(block.elements.length).toBeLessThanOrEqual(10);
      texts.push(...block.elements);
    }
    if (block.type === "actions") {
      for (const button of block.elements) {
        expect(button.text.type).toBe("plain_text");
        expect(button.text.text.length).toBeLessThanOrEqual(slackLimits.buttonText);
        expect(button.url.length).toBeLessThanOrEqual(slackLimits.buttonUrl);
      }
    }
    for (const text of texts) {
      expect(["plain_text", "mrkdwn"]).toContain(text.type);
      expect(text.text.length).toBeGreaterThan(0);
      expect(text.text).not.toMatch(loneSurrogate);
    }
  }
}

function sectionTexts(message: SlackMessage): string[] {
  return (
    message.attachments[0]?.blocks.flatMap((block) =>
      block.type === "section"
        ? [block.text?.text ?? "", ...(block.fields ?? []).map((field) => field.text)]
        : [],
    ) ?? []
  );
}

describe("D20: the team chat message (Slack incoming webhook, Block Kit)", () => {
  it("titles the workflow and its outcome, lists trigger, duration and cost, links the log, colours good", () => {
    const message = buildSlackMessage(eventOf(), { workflowName: "Nightly report", logUrl });
    expectValidBlockKit(message);
    expect(message.blocks[0]).toEqual({
      type: "header",
      text: { type: "plain_text", text: "Workflow Nightly report succeeded" },
    });
    expect(message.attachments).toHaveLength(1);
    expect(message.attachments[0]?.color).toBe("good");
    const texts = sectionTexts(message).join("\n");
    expect(texts).toContain("*Trigger*\nschedule");
    expect(texts).toContain("*Duration*\n2.5 s");
    expect(texts).toContain("*Cost*\n$0.0123 (1234 tokens)");
    expect(texts).toContain('```\n{\n  "summary": "all good"\n}\n```');
    const actions = message.attachments[0]?.blocks.find((block) => block.type === "actions");
    expect(actions).toMatchObject({
      elements: [{ type: "button", url: "https://flowlog.example/api/v1/logs/log_9" }],
    });
    expect(message.text).toBe(
      "Workflow Nightly report succeeded: schedule, 2.5 s, $0.0123 (1234 tokens). <https://flowlog.example/api/v1/logs/log_9|View log>",
    );
  });

  it("a failed execution is coloured danger and says failed", () => {
    const message = buildSlackMessage(eventOf({ level: "error" }), { workflowName: "Sync", logUrl });
    expect(message.attachments[0]?.color).toBe("danger");
    expect(message.text).toMatch(/^Workflow Sync failed/);
    expectValidBlockKit(message);
  });

  it("an inactivity alert (workflow.alert.fired) leads with its reason, coloured danger (D21)", () => {
    const event = buildAlertFiredEvent({
      eventId: "evt_alert",
      firedAtMs: Date.parse("2026-11-22T06:00:00.000Z"),
      rule: "no_activity",
      workflow: { id: "wf_nightly", name: "Nightly" },
      thresholdHours: 6,
      observedHours: 6.5,
      lastExecutionAtMs: Date.parse("2026-11-21T23:30:00.000Z"),
    });
    const message = buildSlackAlertMessage(event);
    expect(message.text).toBe(`Alert: Nightly - ${event.data.alert.reason}`);
    expect(message.attachments[0]?.color).toBe("danger");
    expect(sectionTexts(message).join("\n")).toContain("2026-11-21T23:30:00.000Z");
    expectValidBlockKit(message);
  });

  it("a delivery.failed event names the delivery, its subscription and the last error, coloured danger (D38)", () => {
    const message = buildSlackDeliveryFailedMessage(failedDeliveryEvent);
    expect(message.text).toBe(
      "Delivery failed: workflow.execution.completed to subscription sub_hook (HTTP 503)",
    );
    expect(message.attachments[0]?.color).toBe("danger");
    const text = sectionTexts(message).join("\n");
    for (const shown of ["dlv_lost", "sub_hook", "evt_lost", "the receiver answered 503 &lt;html&gt;"])
      expect(text).toContain(shown);
    expectValidBlockKit(message);
  });

  it("has no final output block when the flag is off", () => {
    const message = buildSlackMessage(eventOf({}, false), { workflowName: "Sync", logUrl });
    expect(sectionTexts(message).join("\n")).not.toContain("Final output");
  });

  it("escapes Slack's control characters in names and output", () => {
    const message = buildSlackMessage(eventOf({ finalOutput: "<!channel> & co" }), {
      workflowName: "A <b> & c",
      logUrl,
    });
    expect(message.text).toMatch(/^Workflow A &lt;b&gt; &amp; c succeeded/);
    expect(sectionTexts(message).join("\n")).toContain('"&lt;!channel&gt; &amp; co"');
  });

  it("cuts a huge final output to one section, between surrogate pairs and entities, with fences intact", () => {
    for (const filler of ["😀", "a😀", "&", "x&"]) {
      const message = buildSlackMessage(eventOf({ finalOutput: filler.repeat(5000) }), {
        workflowName: "W".repeat(400),
        logUrl,
      });
      expectValidBlockKit(message);
      const output = sectionTexts(message).find((text) => text.startsWith("*Final output*")) ?? "";
      expect(output.endsWith("…\n```")).toBe(true);
      expect(output).not.toMatch(/&[a-z]*…/);
      expect(output.length).toBeLessThanOrEqual(slackLimits.sectionText);
    }
  });

  it("neutralises a code fence inside the output", () => {
    const message = buildSlackMessage(eventOf({ finalOutput: "```rm -rf```" }), {
      workflowName: "W",
      logUrl,
    });
    const output = sectionTexts(message).find((text) => text.startsWith("*Final output*")) ?? "";
    expect(output.match(/```/g)).toHaveLength(2);
  });
});

describe("D20: sending to the chat webhook", () => {
  it("posts the message as JSON and succeeds on Slack's 200 ok", async () => {
    const slack = await receiver((_, response) => {
      response.end("ok");
    });
    const event = eventOf();
    const result = await sendSlackAttempt({
      url: `${slack.origin}/services/T000/B000/XXXX`,
      event,
      workflowName: "Nightly report",
      logUrl,
      allowPrivateNetworks: true,
      replyLimitBytes: defaultQuotas.replyBytes.delivery,
    });
    expect(result).toMatchObject({ outcome: "succeeded", httpStatus: 200, responseSnippet: "ok" });
    const [request] = slack.received;
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request?.body ?? "")).toEqual(
      buildSlackMessage(event, { workflowName: "Nightly report", logUrl }),
    );
    expect(request?.headers).not.toHaveProperty("service-signature");
  });

  it.each([
    [500, "retry"],
    [429, "retry"],
    [404, "failed"],
    [400, "failed"],
  ] as const)("Slack answering %i is classified like a webhook: %s", async (status, outcome) => {
    const slack = await receiver((_, response) => {
      response.writeHead(status);
      response.end(status === 404 ? "no_service" : "invalid_payload");
    });
    const result = await sendSlackAttempt({
      url: `${slack.origin}/services/T000/B000/secretpath`,
      event: eventOf(),
      workflowName: "W",
      logUrl,
      allowPrivateNetworks: true,
      replyLimitBytes: defaultQuotas.replyBytes.delivery,
    });
    expect(result).toMatchObject({ outcome, httpStatus: status });
    expect(result.error).not.toContain("secretpath");
  });
});
