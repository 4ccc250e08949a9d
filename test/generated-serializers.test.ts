import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  create,
  type DescMessage,
  fromJson,
  type JsonValue,
  type Message,
  toBinary,
} from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Limits } from "../gen/flowlog/logs/v1/limits_pb.js";
import {
  GetExecutionResponseSchema,
  GetLogResponseSchema,
  ListLogsResponseSchema,
} from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { answerSerializers } from "../gen/flowlog/logs/v1/logs_service_serializers.js";
import { WorkflowStateSchema } from "../gen/flowlog/workflows/v1/workflow_pb.js";
import { computeLimits } from "../src/domain/limits.js";
import { defaultPlanLimits } from "../src/domain/plans.js";
import { seedWorkspace } from "../src/seed/seed.js";
import { type EntryView, executionMetadata, logEntryView } from "../src/services/logs/log-entry-view.js";
import type { LogEntryRecord } from "../src/store/records.js";
import { openStore, type Store } from "../src/store/store.js";
import { toJsonWithPresence } from "../src/util/presence.js";
import { createAccount, type TestAccount } from "./support/flowlog.js";
import { seededRandom } from "./support/random.js";
import { randomMessage } from "./support/random-messages.js";

// Issue 13: the log read API's answers are written by serialisers generated from their descriptors
// (src/codegen/protoc-gen-serializers.ts). They must write exactly what protobuf-es's reflection writes:
// the server's JSON (toJson with alwaysEmitImplicit, less D30's marks) and toBinary's bytes.

const answerTypes = [ListLogsResponseSchema, GetLogResponseSchema, GetExecutionResponseSchema];

type Outcome = { text: string } | { refused: true };

/** What a writer makes of a message, or that it refused it: the two sides must agree on both. */
function outcome(write: () => string | Uint8Array): Outcome {
  try {
    const written = write();
    return { text: typeof written === "string" ? written : Buffer.from(written).toString("hex") };
  } catch {
    return { refused: true };
  }
}

function expectSameJson(schema: DescMessage, message: Message): Outcome {
  const generated = answerSerializers.get(schema.typeName);
  if (!generated) throw new Error(`${schema.typeName} has no generated serialiser`);
  const reflected = outcome(() =>
    JSON.stringify(toJsonWithPresence(schema, message, { alwaysEmitImplicit: true })),
  );
  expect(outcome(() => generated.json(message))).toEqual(reflected);
  return reflected;
}

function expectSameBinary(schema: DescMessage, message: Message): Outcome {
  const generated = answerSerializers.get(schema.typeName);
  if (!generated) throw new Error(`${schema.typeName} has no generated serialiser`);
  const reflected = outcome(() => toBinary(schema, message));
  expect(outcome(() => generated.binary(message))).toEqual(reflected);
  return reflected;
}

function expectSame(schema: DescMessage, message: Message): void {
  expectSameJson(schema, message);
  expectSameBinary(schema, message);
}

describe("the seeded corpus, through the real views", () => {
  const now = Date.parse("2026-03-01T12:00:00.000Z");
  let store: Store;
  let account: TestAccount;
  let entries: LogEntryRecord[];
  let limits: Limits;

  beforeAll(async () => {
    store = openStore({ dataDir: mkdtempSync(path.join(tmpdir(), "flowlog-serializers-")) });
    account = createAccount(store);
    await seedWorkspace(store, {
      workspaceId: account.workspaceId,
      executions: 80,
      seed: "serializers",
      now,
    });
    const user = store.accounts.getUser(account.userId);
    if (!user) throw new Error("the account's user is missing");
    limits = await computeLimits(store, defaultPlanLimits, user, now);
    const page = store.logs.list(
      { workspaceId: account.workspaceId },
      { order: "desc", limit: 1000, withTraceSpans: true, withFinalOutput: true },
    );
    entries = page.entries;
  });
  afterAll(() => store?.close());

  const views: EntryView[] = [false, true].flatMap((full) =>
    [false, true].flatMap((traceSpans) =>
      [false, true].map((finalOutput) => ({ full, traceSpans, finalOutput })),
    ),
  );

  it.each(views)(
    "a page with full=$full, traceSpans=$traceSpans, finalOutput=$finalOutput is written alike",
    (view) => {
      expect(entries.length).toBe(80);
      const page = create(ListLogsResponseSchema, {
        data: entries.map((entry) =>
          logEntryView(entry, store.workflows.getWorkflow(entry.workflowId), view),
        ),
        nextCursor: "eyJvcmRlciI6ImRlc2MifQ",
        limits,
      });
      expect(expectSameJson(ListLogsResponseSchema, page)).not.toEqual({ refused: true });
      expect(expectSameBinary(ListLogsResponseSchema, page)).not.toEqual({ refused: true });
    },
  );

  it("each entry's detail form and its execution are written alike", () => {
    const detail = { full: true, traceSpans: true, finalOutput: true, limits };
    for (const entry of entries) {
      const workflow = store.workflows.getWorkflow(entry.workflowId);
      expectSame(
        GetLogResponseSchema,
        create(GetLogResponseSchema, { data: logEntryView(entry, workflow, detail), limits }),
      );
      const execution = store.logs.getExecution(entry.executionId);
      if (!execution) throw new Error(`execution ${entry.executionId} is missing`);
      const answer = create(GetExecutionResponseSchema, {
        executionId: entry.executionId,
        workflowId: entry.workflowId,
        workflowState: fromJson(WorkflowStateSchema, execution.workflowState as JsonValue, {
          ignoreUnknownFields: true,
        }),
        executionMetadata: executionMetadata(entry),
        limits,
      });
      expectSame(GetExecutionResponseSchema, answer);
    }
  });
});

describe("randomized messages of every answer type", () => {
  it.each(answerTypes)("2,000 random $typeName messages are written alike, refusals included", (schema) => {
    const random = seededRandom(13 + schema.typeName.length);
    const outcomes = { json: 0, binary: 0, refused: 0 };
    for (let i = 0; i < 2_000; i++) {
      const message = randomMessage(schema, random);
      const json = expectSameJson(schema, message);
      const binary = expectSameBinary(schema, message);
      outcomes.json += "text" in json ? 1 : 0;
      outcomes.binary += "text" in binary ? 1 : 0;
      outcomes.refused += "refused" in json || "refused" in binary ? 1 : 0;
    }
    // The corpus is mostly writable, with some refusals to prove those alike too.
    expect(outcomes.json).toBeGreaterThan(1_000);
    expect(outcomes.binary).toBeGreaterThan(1_000);
    expect(outcomes.refused).toBeGreaterThan(10);
  });

  it("a lone surrogate is escaped in JSON and becomes U+FFFD in binary, as reflection does", () => {
    const message = create(GetLogResponseSchema, { data: { id: "a\ud800b", level: "\udfff" } });
    expect(answerSerializers.get(GetLogResponseSchema.typeName)?.json(message)).toContain('"id":"a\\ud800b"');
    expectSame(GetLogResponseSchema, message);
  });
});
