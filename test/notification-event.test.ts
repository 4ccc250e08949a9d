import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { LimitsSchema } from "../gen/flowlog/logs/v1/limits_pb.js";
import {
  buildCompletionEvent,
  type EventIncludes,
  logUrlOf,
  sampleCompletionEvent,
} from "../src/notifications/event.js";
import type { LogEntryRecord } from "../src/store/records.js";

const tokens = { prompt: 10, completion: 5, total: 15 };
const entry: LogEntryRecord = {
  id: "log_abc",
  workspaceId: "ws_1",
  workflowId: "wf_1",
  folderId: null,
  executionId: "ex_1",
  billedUserId: "usr_1",
  level: "error",
  trigger: "webhook",
  startedAt: Date.UTC(2026, 0, 2, 3, 4, 5),
  endedAt: Date.UTC(2026, 0, 2, 3, 4, 6, 250),
  totalDurationMs: 1250,
  cost: { total: 0.5, tokens, models: { "gpt-4o": { input: 0.2, output: 0.3, total: 0.5, tokens } } },
  files: null,
  traceSpans: [{ id: "s1", name: "Agent", type: "agent", status: "error" }],
  finalOutput: { answer: 42 },
};

const limits = create(LimitsSchema, {
  workflowExecutionRateLimit: {
    syncExecutions: {
      requestsPerMinute: 10,
      maxBurst: 20,
      remaining: 0,
      resetAt: "2026-01-02T03:04:11.000Z",
    },
    asyncExecutions: {
      requestsPerMinute: 50,
      maxBurst: 100,
      remaining: 99,
      resetAt: "2026-01-02T03:04:05.600Z",
    },
  },
  usage: { currentPeriodCost: 1.5, limit: 10, plan: "free", isExceeded: false },
});

const none: EventIncludes = { finalOutput: false, traceSpans: false, rateLimits: false, usage: false };
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function build(include: Partial<EventIncludes> = {}) {
  return buildCompletionEvent({
    eventId: "evt_1",
    timestampMs: 1767323046250,
    entry,
    include: { ...none, ...include },
    limits,
  });
}

describe("Events: the workflow.execution.completed payload", () => {
  it("carries exactly the spec's fields, in D7 formats, when no include flag is on", () => {
    const event = build();
    expect(event).toEqual({
      id: "evt_1",
      type: "workflow.execution.completed",
      timestamp: 1767323046250,
      data: {
        workflowId: "wf_1",
        executionId: "ex_1",
        status: "error",
        level: "error",
        trigger: "webhook",
        startedAt: "2026-01-02T03:04:05.000Z",
        endedAt: "2026-01-02T03:04:06.250Z",
        totalDurationMs: 1250,
        cost: entry.cost,
        files: null,
      },
      links: { log: "/v1/logs/log_abc", execution: "/v1/logs/executions/ex_1" },
    });
    expect(Number.isInteger(event.timestamp)).toBe(true);
    expect(event.data.startedAt).toMatch(iso);
    expect(event.data.endedAt).toMatch(iso);
  });

  it("status is success for an info-level execution and error for an error-level one", () => {
    const info = buildCompletionEvent({
      eventId: "e",
      timestampMs: 1,
      entry: { ...entry, level: "info" },
      include: none,
    });
    expect(info.data.status).toBe("success");
    expect(info.data.level).toBe("info");
    expect(build().data.status).toBe("error");
  });

  it.each([
    ["finalOutput", { finalOutput: { answer: 42 } }],
    ["traceSpans", { traceSpans: entry.traceSpans }],
    [
      "rateLimits",
      {
        rateLimits: {
          sync: { requestsPerMinute: 10, maxBurst: 20, remaining: 0, resetAt: "2026-01-02T03:04:11.000Z" },
          async: { requestsPerMinute: 50, maxBurst: 100, remaining: 99, resetAt: "2026-01-02T03:04:05.600Z" },
        },
      },
    ],
    ["usage", { usage: { currentPeriodCost: 1.5, limit: 10, plan: "free", isExceeded: false } }],
  ] as const)("include %s adds exactly its key to data", (flag, added) => {
    const event = build({ [flag]: true });
    expect(event.data).toEqual({ ...build().data, ...added });
  });

  it("every include flag on adds all four keys, and the body survives a JSON round trip unchanged", () => {
    const event = build({ finalOutput: true, traceSpans: true, rateLimits: true, usage: true });
    expect(Object.keys(event.data)).toEqual([
      ...Object.keys(build().data),
      "finalOutput",
      "traceSpans",
      "rateLimits",
      "usage",
    ]);
    const body = JSON.stringify(event);
    expect(JSON.stringify(JSON.parse(body))).toBe(body);
  });

  it("rate limits or usage without the limits object is a programming error, not an empty key", () => {
    expect(() =>
      buildCompletionEvent({ eventId: "e", timestampMs: 1, entry, include: { ...none, usage: true } }),
    ).toThrow(/limits are required/);
  });

  it("links are the spec's paths with the identifiers encoded; the people-facing URL sits under /api", () => {
    const event = buildCompletionEvent({
      eventId: "e",
      timestampMs: 1,
      entry: { ...entry, id: "log/1", executionId: "ex 1" },
      include: none,
    });
    expect(event.links).toEqual({ log: "/v1/logs/log%2F1", execution: "/v1/logs/executions/ex%201" });
    expect(logUrlOf("https://flowlog.example/", build())).toBe("https://flowlog.example/api/v1/logs/log_abc");
  });

  it("the Test sample has the same shape, marked as a test only by its identifiers", () => {
    const all = { finalOutput: true, traceSpans: true, rateLimits: true, usage: true };
    const sample = sampleCompletionEvent({
      eventId: "evt_test_1",
      timestampMs: 1767323046250,
      include: all,
      limits,
    });
    expect(Object.keys(sample)).toEqual(Object.keys(build()));
    expect(Object.keys(sample.data)).toEqual(Object.keys(build(all).data));
    expect(sample.data.executionId).toContain("test");
    expect(sample.links.log).toBe("/v1/logs/log_test_sample");
    expect(sample.data.endedAt).toBe("2026-01-02T03:04:06.250Z");
    expect(sample.data.totalDurationMs).toBe(
      Date.parse(sample.data.endedAt) - Date.parse(sample.data.startedAt),
    );
  });
});
