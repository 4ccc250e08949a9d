import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAlertFiredEvent } from "../src/notifications/alert-event.js";
import { buildDeliveryFailedEvent } from "../src/notifications/delivery-failed-event.js";
import {
  buildAlertFiredEmail,
  buildDeliveryFailedEmail,
  buildEmail,
  type EmailContent,
  sendEmailAttempt,
} from "../src/notifications/email.js";
import {
  type CompletionEvent,
  type EventIncludes,
  sampleCompletionEvent,
} from "../src/notifications/event.js";
import type { AttemptResult } from "../src/notifications/http-channel.js";
import { closedPort } from "./support/http-receiver.js";
import { type ReceivedMail, type SmtpServer, startSmtpServer } from "./support/smtp-server.js";

// Characters that URL encoding changes, so both the encoded and the decoded form must stay out of errors (D24).
const password = "s3cret/p@ss w%rd";
const from = "flowlog <flowlog@example.test>";
const baseUrl = "https://flowlog.example.test";
const busy = "busy@example.test";
const nobody = "nobody@example.test";

let smtp: SmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer({ user: "flowlog", password, replies: { [busy]: 451, [nobody]: 550 } });
});
afterAll(async () => {
  await smtp?.close();
});

const noIncludes: EventIncludes = { finalOutput: false, traceSpans: false, rateLimits: false, usage: false };

function completionEvent(changes: Partial<CompletionEvent["data"]> = {}): CompletionEvent {
  const event = sampleCompletionEvent({ eventId: "evt_email", timestampMs: Date.now(), include: noIncludes });
  return { ...event, data: { ...event.data, ...changes } };
}

function failedEvent(): CompletionEvent {
  return completionEvent({ status: "error", level: "error" });
}

function attempt(email: EmailContent, recipients: string[], smtpUrl = smtp.url): Promise<AttemptResult> {
  return sendEmailAttempt({ smtpUrl, from, recipients, email, timeoutMs: 5_000 });
}

/** Sends one e-mail and returns it as the SMTP server received it. */
async function deliver(email: EmailContent, recipients: string[]): Promise<ReceivedMail> {
  const before = smtp.received.length;
  const result = await attempt(email, recipients);
  expect(result).toMatchObject({ outcome: "succeeded" });
  const received = await smtp.waitForMessages(before + 1);
  return received[before] as ReceivedMail;
}

function expectNoPassword(result: AttemptResult): void {
  const recorded = JSON.stringify(result);
  for (const form of [password, encodeURIComponent(password)]) expect(recorded).not.toContain(form);
}

describe("Events: the notification e-mail (D20)", () => {
  it("arrives at every recipient with a text and an HTML part, sent as the configured sender", async () => {
    const recipients = ["ops@example.test", "dev@example.test", "lead@example.test"];
    const email = buildEmail(completionEvent(), { workflowName: "Nightly sync", publicBaseUrl: baseUrl });
    const mail = await deliver(email, recipients);

    expect(mail.rcptTo).toEqual(recipients);
    expect(mail.parsed.to?.map((to) => to.address)).toEqual(recipients);
    expect(mail.parsed.from?.address).toBe("flowlog@example.test");
    expect(mail.user).toBe("flowlog");
    expect(mail.parsed.text?.trim()).toBe(email.text.trim());
    expect(mail.parsed.html?.trim()).toBe(email.html.trim());
  });

  it("says the workflow succeeded, with status, trigger, duration, cost and the log link in both parts", async () => {
    const email = buildEmail(completionEvent(), { workflowName: "Nightly sync", publicBaseUrl: baseUrl });
    const mail = await deliver(email, ["ops@example.test"]);

    expect(mail.parsed.subject).toBe("Workflow Nightly sync succeeded");
    for (const part of [mail.parsed.text ?? "", mail.parsed.html ?? ""]) {
      expect(part).toContain("succeeded");
      expect(part).toContain("manual");
      expect(part).toContain("1.23 s");
      expect(part).toContain("$0.000045");
      expect(part).toContain(`${baseUrl}/api/v1/logs/log_test_sample`);
    }
  });

  it("says the workflow failed when the execution ended in error", async () => {
    const email = buildEmail(failedEvent(), { workflowName: "Nightly sync", publicBaseUrl: baseUrl });
    const mail = await deliver(email, ["ops@example.test"]);

    expect(mail.parsed.subject).toBe("Workflow Nightly sync failed");
    expect(mail.parsed.text).toMatch(/Status:\s+failed/);
  });

  it("names the alert and its reason in the subject and the body", async () => {
    const reason = "3 consecutive failed executions";
    const email = buildEmail(failedEvent(), {
      workflowName: "Nightly sync",
      publicBaseUrl: baseUrl,
      alertReason: reason,
    });
    const mail = await deliver(email, ["ops@example.test"]);

    expect(mail.parsed.subject).toBe(`Alert: Nightly sync - ${reason}`);
    expect(mail.parsed.text).toContain(reason);
    expect(mail.parsed.html).toContain(reason);
  });

  it("builds the log link from the configured public base URL", () => {
    const email = buildEmail(completionEvent(), {
      workflowName: "Nightly sync",
      publicBaseUrl: "https://logs.example.test:8443/",
    });
    const link = "https://logs.example.test:8443/api/v1/logs/log_test_sample";

    expect(email.text).toContain(link);
    expect(email.html).toContain(`<a href="${link}">`);
    expect(email.text).not.toContain("localhost");
  });

  it("shows the final output, rate limits and usage only when the event carries them", () => {
    const options = { workflowName: "Nightly sync", publicBaseUrl: baseUrl };
    const without = buildEmail(completionEvent(), options);
    const withAll = buildEmail(
      completionEvent({
        finalOutput: { answer: "forty-two" },
        rateLimits: { sync: { requestsPerMinute: 30, remaining: 29 } },
        usage: { currentPeriodCost: 1.5, limit: 100 },
      }),
      options,
    );

    for (const part of [without.text, without.html]) {
      for (const title of ["Final output", "Rate limits", "Usage"]) expect(part).not.toContain(title);
    }
    for (const part of [withAll.text, withAll.html]) {
      expect(part).toContain("Final output");
      expect(part).toContain("Rate limits");
      expect(part).toContain("Usage");
    }
    expect(withAll.text).toContain('{\n  "answer": "forty-two"\n}');
    expect(withAll.text).toContain('"requestsPerMinute": 30');
    expect(withAll.text).toContain('"currentPeriodCost": 1.5');
  });

  it("truncates a large final output and says so", () => {
    const email = buildEmail(completionEvent({ finalOutput: { text: "x".repeat(50_000) } }), {
      workflowName: "Nightly sync",
      publicBaseUrl: baseUrl,
    });

    expect(email.text.length).toBeLessThan(6_000);
    expect(email.text).toContain("truncated");
    expect(email.html).toContain("truncated");
  });

  it("keeps a hostile workflow name and output as text in the HTML part", async () => {
    const name = `<script>alert("x")</script><img src=x onerror='alert(1)'> & co`;
    const email = buildEmail(completionEvent({ finalOutput: "</pre><script>steal()</script>" }), {
      workflowName: name,
      publicBaseUrl: baseUrl,
    });
    const mail = await deliver(email, ["ops@example.test"]);
    const html = mail.parsed.html ?? "";

    expect(html).not.toMatch(/<script|<img|<\/pre><script/i);
    expect(html).toContain("&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;");
    expect(html).toContain("&#38; co");
    expect(mail.parsed.subject).toBe(`Workflow ${name} succeeded`);
    expect(mail.parsed.text).toContain(name);
  });

  it("keeps a workflow name with line breaks on the subject line, adding no header", async () => {
    const email = buildEmail(completionEvent(), {
      workflowName: "Sync\r\nBcc: attacker@example.test",
      publicBaseUrl: baseUrl,
    });
    const mail = await deliver(email, ["ops@example.test"]);

    expect(mail.parsed.subject).toBe("Workflow Sync Bcc: attacker@example.test succeeded");
    expect(mail.parsed.bcc).toBeUndefined();
    expect(mail.rcptTo).toEqual(["ops@example.test"]);
  });
});

describe("an inactivity alert by e-mail (D20, D21)", () => {
  it("arrives with the reason in the subject and the silence in both parts", async () => {
    const event = buildAlertFiredEvent({
      eventId: "evt_alert_mail",
      firedAtMs: Date.parse("2026-11-22T06:00:00.000Z"),
      rule: "no_activity",
      workflow: { id: "wf_nightly", name: "Nightly <report>" },
      thresholdHours: 6,
      observedHours: 6.5,
      lastExecutionAtMs: null,
    });
    const email = buildAlertFiredEmail(event);
    expect(email.subject).toBe(`Alert: Nightly <report> - ${event.data.alert.reason}`);
    expect(email.text).toContain("never");
    expect(email.html).not.toContain("<report>");
    expect((await attempt(email, ["ops@example.test"])).outcome).toBe("succeeded");
  });
});

describe("a delivery.failed event by e-mail (D38)", () => {
  it("names the failed delivery in the subject, and its series and last error in both parts", async () => {
    const event = buildDeliveryFailedEvent(
      {
        id: "dlv_lost",
        eventId: "evt_lost",
        eventType: "workflow.alert.fired",
        subscriptionId: "sub_hook",
        workspaceId: "ws_1",
        logId: null,
        status: "failed",
        attempts: 1,
        lastError: "connect ECONNREFUSED <refused>",
        lastHttpStatus: null,
        createdAt: Date.parse("2026-11-22T06:00:00.000Z"),
        updatedAt: Date.parse("2026-11-22T06:00:01.000Z"),
      },
      2,
      [],
    );
    const email = buildDeliveryFailedEmail(event);
    expect(email.subject).toBe("Delivery failed: workflow.alert.fired to subscription sub_hook");
    for (const part of [email.text, email.html]) {
      for (const shown of ["dlv_lost", "evt_lost", "2026-11-22T06:00:01.000Z"]) expect(part).toContain(shown);
    }
    expect(email.text).toContain("connect ECONNREFUSED <refused>");
    expect(email.html).not.toContain("<refused>");
    expect((await attempt(email, ["ops@example.test"])).outcome).toBe("succeeded");
  });
});

describe("Delivery rules: e-mail attempts retry on transient SMTP failures only (D20)", () => {
  const email = () => buildEmail(completionEvent(), { workflowName: "Nightly sync", publicBaseUrl: baseUrl });

  it("retries a 451 reply", async () => {
    const result = await attempt(email(), [busy]);

    expect(result.outcome).toBe("retry");
    expect(result.error).toContain("451");
    expectNoPassword(result);
  });

  it("fails at once on a 550 reply", async () => {
    const result = await attempt(email(), [nobody]);

    expect(result.outcome).toBe("failed");
    expect(result.error).toContain("550");
    expectNoPassword(result);
  });

  it("counts a mail accepted for some recipients as delivered, recording the refusals", async () => {
    const before = smtp.received.length;
    const result = await attempt(email(), ["ops@example.test", busy]);

    expect(result.outcome).toBe("succeeded");
    expect(result.responseSnippet).toMatch(/^250/);
    expect(result.responseSnippet).toContain(busy);
    const received = await smtp.waitForMessages(before + 1);
    expect(received[before]?.rcptTo).toEqual(["ops@example.test"]);
  });

  it("retries when the connection is refused", async () => {
    const url = `smtp://flowlog:${encodeURIComponent(password)}@127.0.0.1:${await closedPort()}`;
    const result = await attempt(email(), ["ops@example.test"], url);

    expect(result.outcome).toBe("retry");
    expect(result.error).toContain("ECONNREFUSED");
    expectNoPassword(result);
  });

  it("retries when the server never answers within the timeout", async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket)).listen(0, "127.0.0.1");
    await once(silent, "listening");
    const { port } = silent.address() as { port: number };
    try {
      const started = performance.now();
      const result = await sendEmailAttempt({
        smtpUrl: `smtp://flowlog:${encodeURIComponent(password)}@127.0.0.1:${port}`,
        from,
        recipients: ["ops@example.test"],
        email: email(),
        timeoutMs: 500,
      });
      const waitedMs = performance.now() - started;

      expect(result.outcome).toBe("retry");
      expect(waitedMs).toBeGreaterThanOrEqual(450);
      expect(waitedMs).toBeLessThan(3_000);
      expectNoPassword(result);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it("never reveals the SMTP password, even when the server echoes it back", async () => {
    const wrong = `${password}-wrong`;
    const url = `smtp://flowlog:${encodeURIComponent(wrong)}@127.0.0.1:${smtp.port}`;
    const result = await attempt(email(), ["ops@example.test"], url);

    expect(result.outcome).toBe("failed");
    expect(result.error).toContain("535");
    expect(result.error).toContain("[redacted]");
    const recorded = JSON.stringify(result);
    for (const form of [wrong, encodeURIComponent(wrong), url]) expect(recorded).not.toContain(form);
  });

  it("fails without connecting when there are no recipients, more than 10, or no SMTP URL", async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `r${i}@example.test`);

    expect((await attempt(email(), [])).outcome).toBe("failed");
    expect((await attempt(email(), eleven)).error).toContain("1 to 10 recipients");
    const unconfigured = await sendEmailAttempt({
      smtpUrl: undefined,
      from,
      recipients: ["ops@example.test"],
      email: email(),
      timeoutMs: 1_000,
    });
    expect(unconfigured).toMatchObject({
      outcome: "failed",
      error: expect.stringContaining("FLOWLOG_SMTP_URL"),
    });
  });
});
