import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { temporal } from "@temporalio/proto";
import { bundleWorkflowCode, DefaultLogger, Worker } from "@temporalio/worker";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * Executions in flight when a worker is upgraded go on under the new workflow code, which must replay
 * their histories as written. Each fixture is the history of one execution as the client fetched it from
 * the workflow code of its time, in protobuf's binary form: the SDK's reader of `temporal workflow show
 * -o json` output fails in this install ("type must be a Type", two protobufjs majors side by side).
 * Issue 12's: starter, an api block answered at once, an api block answered after one 503, a response
 * block, started without a state. Issue 49's: starter, an api block answered at once, a response block,
 * started as the API starts one (the state handed over) and as a schedule does (version 0, no state).
 * Issue 51's: a no-activity watcher on the executions' queue (where they ran before), started by a
 * subscription, that looked, fired its alert, delivered it and went to sleep again; a redelivery whose
 * series the receiver refused with 400, from before a failed series was announced (delivery.failed); and an
 * endpoint-health watcher of D35 from before D36's hold joined it, that noticed its endpoint, slept, was
 * woken by a failure and slept again. D47's: an API execution cancelled (through Temporal, no reason) while
 * its HTTP block, answered 503, waited a minute for its retry. D50's: an API execution of one HTTP block
 * with a webhook subscription, and its notifications' fan-out, traced by Temporal's OpenTelemetry
 * interceptors (their context in the start's and the commands' headers, the workflows bundled with the
 * interceptors), from before the context travelled in the inputs; and the same pair traced the way that
 * replaced it (the caller's context in the execution's input, the execution span's in the fan-out's).
 * D47's bulk retry of forty executions, one page of two batches, on a server that suggested continuing as
 * new from its second batch on, from when a run continued as new only between pages.
 */
const fixture = (name: string) =>
  temporal.api.history.v1.History.decode(
    readFileSync(new URL(`./fixtures/histories/${name}.bin`, import.meta.url)),
  );

let workflowBundle: Awaited<ReturnType<typeof bundleWorkflowCode>>;

beforeAll(async () => {
  workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL("../src/temporal/workflows/index.ts", import.meta.url)),
    logger: new DefaultLogger("ERROR"),
  });
}, 60_000);

const replay = (history: unknown) => Worker.runReplayHistory({ workflowBundle }, history);

describe("Workflow code replays the histories it wrote before (issue 12)", () => {
  it("an execution begun when every HTTP block was an activity replays as it was written", async () => {
    await expect(replay(fixture("execution-blocks-as-activities"))).resolves.toBeUndefined();
  });

  it("an execution whose HTTP blocks tried first as local activities replays as it was written", async () => {
    await expect(replay(fixture("execution-first-try-local"))).resolves.toBeUndefined();
  });
});

describe("Workflow code replays the histories it wrote before its starts were checked (issue 49)", () => {
  it("an API execution whose handed-over state ran unchecked replays as it was written", async () => {
    await expect(replay(fixture("execution-handed-state"))).resolves.toBeUndefined();
  });

  it("a scheduled run admitted before its version was loaded replays as it was written", async () => {
    await expect(replay(fixture("execution-scheduled"))).resolves.toBeUndefined();
  });

  it("an API execution whose handed-over state was checked replays as it was written", async () => {
    await expect(replay(fixture("execution-checked-start"))).resolves.toBeUndefined();
  });

  it("a scheduled run loaded and checked before it was admitted replays as it was written", async () => {
    await expect(replay(fixture("execution-checked-schedule"))).resolves.toBeUndefined();
  });
});

describe("Workflow code replays the watchers it ran on the executions' queue (issue 51)", () => {
  it("a no-activity watcher that fired and slept on the executions' queue replays as it was written", async () => {
    await expect(replay(fixture("watch-inactivity-on-execution-queue"))).resolves.toBeUndefined();
  });
});

describe("Workflow code replays the deliveries that failed before delivery.failed events (issue 51, D38)", () => {
  it("a redelivery whose series failed, written before a failure was announced, replays as it was written", async () => {
    await expect(replay(fixture("redelivery-failed"))).resolves.toBeUndefined();
  });
});

describe("Workflow code replays the endpoint watchers it ran before the hold (issue 51, D36)", () => {
  it("a D35 watcher that noticed, slept and was woken replays as it was written", async () => {
    await expect(replay(fixture("watch-endpoint-health-before-hold"))).resolves.toBeUndefined();
  });
});

describe("Workflow code replays the executions it cancelled before D47", () => {
  it("an execution cancelled in its HTTP block's retry wait, logged without a reason or spans, replays as it was written", async () => {
    await expect(replay(fixture("execution-cancelled-before-reason"))).resolves.toBeUndefined();
  });
});

describe("Workflow code replays the executions traced before and after their context moved into the input (D50)", () => {
  it("an execution and its fan-out traced by Temporal's interceptors replay without them", async () => {
    await expect(replay(fixture("execution-traced-by-temporal"))).resolves.toBeUndefined();
    await expect(replay(fixture("fan-out-traced-by-temporal"))).resolves.toBeUndefined();
  });

  it("an execution and its fan-out that carry the trace context in their inputs replay as they were written", async () => {
    await expect(replay(fixture("execution-traced-in-input"))).resolves.toBeUndefined();
    await expect(replay(fixture("fan-out-traced-in-input"))).resolves.toBeUndefined();
  });
});

describe("Workflow code replays the bulk retries that continued as new only between pages (D47)", () => {
  it("a bulk retry that went on within its page past Temporal's suggestion replays as it was written", async () => {
    await expect(replay(fixture("bulk-retry-suggested-mid-page"))).resolves.toBeUndefined();
  });
});
