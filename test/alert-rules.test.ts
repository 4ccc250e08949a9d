import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AlertRuleRecord, evaluateAlertRule } from "../src/domain/alert-rules.js";
import { buildEmail } from "../src/notifications/email.js";
import { buildCompletionEvent } from "../src/notifications/event.js";
import { buildSlackMessage } from "../src/notifications/slack.js";
import type { Level, LogEntryRecord, Trigger } from "../src/store/records.js";
import { openStore, type Store } from "../src/store/store.js";
import {
  createAccount,
  createWorkflow,
  execution,
  subscribeWebhook,
  type TestAccount,
} from "./support/flowlog.js";

let store: Store;
let dataDir: string;
let account: TestAccount;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-alerts-"));
  store = openStore({ dataDir });
  account = await createAccount(store);
});
afterAll(() => store.close());

const t0 = Date.parse("2026-11-01T00:00:00.000Z");
const hours = (n: number) => n * 60 * 60 * 1000;

interface Run {
  at: number;
  level?: Level;
  trigger?: Trigger;
  durationMs?: number;
  cost?: number;
}

/** Logs one execution of the workflow at a controlled time (D21 "now" is its end). */
async function run(
  workflowId: string,
  { at, level = "info", trigger = "api", durationMs = 1000, cost }: Run,
) {
  const record = execution(account, workflowId, {
    startedAt: at,
    totalDurationMs: durationMs,
    level,
    trigger,
  });
  if (cost !== undefined) record.entry.cost = { ...record.entry.cost, total: cost };
  await store.logs.insertExecution(record);
  return record.entry;
}

/** Writes the executions one after another, in the order they ran. */
async function runAll(workflowId: string, runs: Run[]): Promise<LogEntryRecord[]> {
  const entries: LogEntryRecord[] = [];
  for (const r of runs) entries.push(await run(workflowId, r));
  return entries;
}

function evaluate(rule: AlertRuleRecord, entry: LogEntryRecord, triggers: Trigger[] = []) {
  return evaluateAlertRule(rule, entry, triggers, store.alerts);
}

/** Runs the executions in order, answering what the rule says on each (true = fired). */
async function firings(rule: AlertRuleRecord, runs: Run[], triggers: Trigger[] = []): Promise<boolean[]> {
  const workflowId = await createWorkflow(store, account.workspaceId);
  const fired: boolean[] = [];
  for (const r of runs) fired.push((await evaluate(rule, await run(workflowId, r), triggers)) !== null);
  return fired;
}

const minutes = (n: number) => n * 60 * 1000;
const errorsAt = (...offsets: number[]): Run[] =>
  offsets.map((offset) => ({ at: t0 + offset, level: "error" }));

describe("consecutive_failures (D21)", () => {
  const rule: AlertRuleRecord = { rule: "consecutive_failures", threshold: 3, windowHours: null };

  it("fires when the last X executions are all errors, not at X - 1", async () => {
    expect(await firings(rule, errorsAt(0, minutes(1), minutes(2)))).toEqual([false, false, true]);
  });

  it("a success resets the counter", async () => {
    const runs: Run[] = [
      ...errorsAt(0, minutes(1)),
      { at: t0 + minutes(2) },
      ...errorsAt(minutes(3), minutes(4), minutes(5)),
    ];
    expect(await firings(rule, runs)).toEqual([false, false, false, false, false, true]);
  });

  it("reports the count and a readable reason", async () => {
    const workflowId = await createWorkflow(store, account.workspaceId);
    const entries = await runAll(workflowId, errorsAt(0, minutes(1), minutes(2)));
    expect(await evaluate(rule, entries[2] as LogEntryRecord)).toEqual({
      rule: "consecutive_failures",
      threshold: 3,
      windowHours: null,
      observed: 3,
      reason: "3 executions failed in a row",
    });
  });
});

describe("failure_rate (D21)", () => {
  const rule: AlertRuleRecord = { rule: "failure_rate", threshold: 50, windowHours: 24 };

  it("is silent below 5 executions in the window and fires from the fifth", async () => {
    // The first execution, a day and more earlier, only makes the workflow observed for the whole window.
    const runs: Run[] = [
      { at: t0 },
      { at: t0 + hours(30) },
      ...errorsAt(hours(30) + 1, hours(30) + 2, hours(30) + 3, hours(30) + 4),
    ];
    expect(await firings(rule, runs)).toEqual([false, false, false, false, false, true]);
  });

  it("does not fire at exactly X % and fires above it", async () => {
    const runs: Run[] = [
      { at: t0 },
      { at: t0 + hours(30) },
      { at: t0 + hours(30) + 1 },
      { at: t0 + hours(30) + 2 },
      ...errorsAt(hours(30) + 3, hours(30) + 4, hours(30) + 5, hours(30) + 6),
    ];
    // 3 of 6 in the window = 50 %: silent; 4 of 7: fires.
    expect((await firings(rule, runs)).slice(-2)).toEqual([false, true]);
  });

  it("is silent before the workflow has been observed for Y hours, and fires once it has", async () => {
    const workflowId = await createWorkflow(store, account.workspaceId);
    const early = await runAll(workflowId, errorsAt(0, hours(1), hours(2), hours(3), hours(4)));
    expect(await evaluate(rule, early[4] as LogEntryRecord)).toBeNull();
    // Ends exactly Y hours after the first execution started: the window has fully elapsed.
    const late = await run(workflowId, { at: t0 + hours(24) - 1000, level: "error", durationMs: 1000 });
    expect(await evaluate(rule, late)).toMatchObject({ observed: 100, windowHours: 24 });
  });
});

describe("latency_threshold (D21)", () => {
  const rule: AlertRuleRecord = { rule: "latency_threshold", threshold: 10, windowHours: null };

  it("fires above X seconds, not at X", async () => {
    const runs: Run[] = [
      { at: t0, durationMs: 10_000 },
      { at: t0 + minutes(1), durationMs: 10_001 },
    ];
    expect(await firings(rule, runs)).toEqual([false, true]);
  });
});

describe("latency_spike (D21)", () => {
  const rule: AlertRuleRecord = { rule: "latency_spike", threshold: 100, windowHours: 24 };
  const baseline = (count: number): Run[] =>
    Array.from({ length: count }, (_, i) => ({ at: t0 + minutes(i), durationMs: 1000 }));

  it("fires above (1 + X/100) x the average of the previous executions, not at it", async () => {
    const workflowId = await createWorkflow(store, account.workspaceId);
    for (const r of baseline(5)) await run(workflowId, r);
    const candidate = (totalDurationMs: number) =>
      execution(account, workflowId, { startedAt: t0 + minutes(10), totalDurationMs }).entry;
    expect(await evaluate(rule, candidate(2000))).toBeNull();
    expect(await evaluate(rule, candidate(2001))).not.toBeNull();
  });

  it("uses only the previous executions as the baseline", async () => {
    const workflowId = await createWorkflow(store, account.workspaceId);
    for (const r of baseline(5)) await run(workflowId, r);
    // Started later: not part of this execution's baseline, however slow.
    await run(workflowId, { at: t0 + minutes(30), durationMs: 100_000 });
    // Were it its own baseline, the average would be 1183 ms and 2100 ms only 77 % above.
    const spike = await run(workflowId, { at: t0 + minutes(10), durationMs: 2100 });
    expect(await evaluate(rule, spike)).toMatchObject({ observed: expect.closeTo(110), threshold: 100 });
  });

  it("is silent with fewer than 5 previous executions", async () => {
    expect(await firings(rule, [...baseline(4), { at: t0 + minutes(10), durationMs: 60_000 }])).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe("cost_threshold (D21)", () => {
  const rule: AlertRuleRecord = { rule: "cost_threshold", threshold: 0.5, windowHours: null };

  it("fires above X USD, not at X", async () => {
    const runs: Run[] = [
      { at: t0, cost: 0.5 },
      { at: t0 + 1, cost: 0.5000001 },
    ];
    expect(await firings(rule, runs)).toEqual([false, true]);
  });
});

describe("error_count (D21)", () => {
  const rule: AlertRuleRecord = { rule: "error_count", threshold: 2, windowHours: 24 };

  it("counts errors that are not consecutive, and fires at more than X", async () => {
    const runs: Run[] = [
      ...errorsAt(0),
      { at: t0 + minutes(1) },
      ...errorsAt(minutes(2)),
      { at: t0 + minutes(3) },
      ...errorsAt(minutes(4)),
    ];
    expect(await firings(rule, runs)).toEqual([false, false, false, false, true]);
  });

  it("counts only the last Y hours", async () => {
    expect(await firings(rule, errorsAt(0, hours(1), hours(26)))).toEqual([false, false, false]);
  });
});

describe("what a rule sees (D21)", () => {
  const rule: AlertRuleRecord = { rule: "consecutive_failures", threshold: 2, windowHours: null };
  const mixed: Run[] = [
    { at: t0, level: "error", trigger: "schedule" },
    { at: t0 + 1, trigger: "api" },
    { at: t0 + 2, level: "error", trigger: "schedule" },
  ];

  it("the trigger filter narrows the executions a rule sees", async () => {
    expect(await firings(rule, mixed, ["schedule"])).toEqual([false, false, true]);
  });

  it("an empty trigger filter means all triggers", async () => {
    expect(await firings(rule, mixed, [])).toEqual([false, false, false]);
  });

  it("the level filter does not apply to a subscription with a rule", async () => {
    const workflowId = await createWorkflow(store, account.workspaceId);
    const id = await subscribeWebhook(store, account.workspaceId, "https://example.test/hook", {
      createdAt: t0,
      allWorkflows: false,
      workflowIds: [workflowId],
      levelFilter: ["info"],
      alertRule: rule,
    });
    const failed = await run(workflowId, { at: t0, level: "error" });
    expect((await store.notifications.matching(account.workspaceId, failed)).map((s) => s.id)).toEqual([id]);
  });
});

describe("alert payloads (D20, D21)", () => {
  const alert = {
    rule: "error_count",
    reason: "3 executions failed in the last 24 h, more than 2",
    threshold: 2,
    observed: 3,
    windowHours: 24,
    firedAt: "2026-11-01T10:00:01.234Z",
  };
  const alertEvent = () =>
    buildCompletionEvent({
      eventId: "evt_alert",
      timestampMs: t0,
      entry: execution(account, "wf_alert", { level: "error" }).entry,
      include: { finalOutput: false, traceSpans: false, rateLimits: false, usage: false },
      alert,
    });

  it("the completion event of the tripping execution carries data.alert", () => {
    const event = alertEvent();
    expect(event.type).toBe("workflow.execution.completed");
    expect(event.data.alert).toEqual(alert);
  });

  it("the e-mail subject and the chat message lead with the reason", () => {
    const event = alertEvent();
    const email = buildEmail(event, {
      workflowName: "Nightly",
      publicBaseUrl: "http://x.test",
      alertReason: alert.reason,
    });
    expect(email.subject).toBe(`Alert: Nightly - ${alert.reason}`);
    const slack = buildSlackMessage(event, { workflowName: "Nightly", logUrl: "http://x.test/log" });
    expect(slack.blocks[0]).toMatchObject({ text: { text: `Alert: Nightly - ${alert.reason}` } });
    expect(slack.text).toContain(alert.reason);
    expect(slack.attachments[0]?.blocks[0]).toMatchObject({ text: { text: `*${alert.reason}*` } });
  });
});
