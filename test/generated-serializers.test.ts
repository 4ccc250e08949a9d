import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  create,
  type DescMessage,
  fromJson,
  type JsonObject,
  type JsonValue,
  type Message,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Limits } from "../gen/flowlog/logs/v1/limits_pb.js";
import {
  type Cost,
  CostSchema,
  type ExecutionData,
  ExecutionDataSchema,
  type TraceSpan,
  TraceSpanSchema,
} from "../gen/flowlog/logs/v1/log_entry_pb.js";
import {
  GetExecutionResponseSchema,
  type GetLogResponse,
  GetLogResponseSchema,
  GetLogStatsResponseSchema,
  ListLogsResponseSchema,
} from "../gen/flowlog/logs/v1/logs_service_pb.js";
import {
  answerSerializers,
  isCanonicalCostJson,
  isCanonicalTraceSpanList,
  traceSpanFromJson,
} from "../gen/flowlog/logs/v1/logs_service_serializers.js";
import { WorkflowStateSchema } from "../gen/flowlog/workflows/v1/workflow_pb.js";
import {
  isJsonObject,
  StoredValue,
  valueFromJson,
  valueFromStoredText,
} from "../src/codegen/serializers/runtime/json-reading.js";
import { valueJson } from "../src/codegen/serializers/runtime/json-text.js";
import { toJsonWithPresence } from "../src/codegen/serializers/runtime/presence.js";
import { computeLimits } from "../src/limits/execution-limits.js";
import { defaultPlanLimits } from "../src/limits/plans.js";
import { seedWorkspace } from "../src/seed/seed.js";
import { fullCost, StoredCost } from "../src/services/logs/cost-message.js";
import { type EntryView, executionMetadata, logEntryView } from "../src/services/logs/log-entry-view.js";
import { StoredExecutionData } from "../src/services/logs/stored-execution-data.js";
import { costDetail } from "../src/store/log-rows.js";
import type { CostRecord, ListedEntryRecord, StoredCostRecord } from "../src/store/records.js";
import { openStore, type Store } from "../src/store/store.js";
import { createAccount, type TestAccount } from "./support/flowlog.js";
import { seededRandom } from "./support/random.js";
import { randomMessage } from "./support/random-messages.js";

// Issue 13: the log read API's answers are written by serialisers generated from their descriptors
// (src/codegen/protoc-gen-serializers.ts). They must write exactly what protobuf-es's reflection writes:
// the server's JSON (toJson with alwaysEmitImplicit, less D30's marks) and toBinary's bytes. The trace
// spans stored as protobuf JSON are read back by generated readers, which must build what fromJson builds.

const answerTypes = [
  ListLogsResponseSchema,
  GetLogResponseSchema,
  GetExecutionResponseSchema,
  GetLogStatsResponseSchema,
];

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
  // The generated writer first: reflection reads each StoredValue's kind, after which it is written as built.
  const written = outcome(() => generated.json(message));
  const reflected = outcome(() =>
    JSON.stringify(toJsonWithPresence(schema, message, { alwaysEmitImplicit: true })),
  );
  expect(written).toEqual(reflected);
  return reflected;
}

function expectSameBinary(schema: DescMessage, message: Message): Outcome {
  const generated = answerSerializers.get(schema.typeName);
  if (!generated) throw new Error(`${schema.typeName} has no generated serialiser`);
  const written = outcome(() => generated.binary(message));
  const reflected = outcome(() => toBinary(schema, message));
  expect(written).toEqual(reflected);
  return reflected;
}

/** Both forms, each from its own build of the message, since reflection builds its stored values. */
function expectSame(schema: DescMessage, build: () => Message): void {
  expectSameJson(schema, build());
  expectSameBinary(schema, build());
}

describe("the seeded corpus, through the real views", () => {
  const now = Date.parse("2026-03-01T12:00:00.000Z");
  let store: Store;
  let account: TestAccount;
  let entries: (ListedEntryRecord & { cost: CostRecord | StoredCostRecord })[];
  let limits: Limits;

  beforeAll(async () => {
    store = openStore({ dataDir: mkdtempSync(path.join(tmpdir(), "flowlog-serializers-")) });
    account = await createAccount(store);
    await seedWorkspace(store, {
      workspaceId: account.workspaceId,
      executions: 80,
      seed: "serializers",
      now,
    });
    const user = await store.accounts.getUser(account.userId);
    if (!user) throw new Error("the account's user is missing");
    limits = await computeLimits(store, defaultPlanLimits, user, now);
    const page = await store.logs.list(
      { workspaceId: account.workspaceId },
      { order: "desc", limit: 1000, withCostDetail: true, withTraceSpans: true, withFinalOutput: true },
    );
    entries = page.entries.map((e) => ({ ...e, cost: costDetail(e.cost) }));
  });
  afterAll(() => store?.close());

  const views: EntryView[] = [false, true].flatMap((full) =>
    [false, true].flatMap((traceSpans) =>
      [false, true].map((finalOutput) => ({ full, traceSpans, finalOutput })),
    ),
  );

  it.each(views)(
    "a page with full=$full, traceSpans=$traceSpans, finalOutput=$finalOutput is written alike",
    async (view) => {
      expect(entries.length).toBe(80);
      const workflows = await Promise.all(
        entries.map((entry) => store.workflows.getWorkflow(entry.workflowId)),
      );
      const page = () =>
        create(ListLogsResponseSchema, {
          data: entries.map((entry, index) => logEntryView(entry, workflows[index], view)),
          nextCursor: "eyJvcmRlciI6ImRlc2MifQ",
          limits,
        });
      expect(expectSameJson(ListLogsResponseSchema, page())).not.toEqual({ refused: true });
      expect(expectSameBinary(ListLogsResponseSchema, page())).not.toEqual({ refused: true });
    },
  );

  it("each entry's detail form and its execution are written alike", async () => {
    const detail = { full: true, traceSpans: true, finalOutput: true, limits };
    for (const entry of entries) {
      const workflow = await store.workflows.getWorkflow(entry.workflowId);
      expectSame(GetLogResponseSchema, () =>
        create(GetLogResponseSchema, { data: logEntryView(entry, workflow, detail), limits }),
      );
      const execution = await store.logs.getExecution(entry.executionId);
      if (!execution) throw new Error(`execution ${entry.executionId} is missing`);
      const answer = () =>
        create(GetExecutionResponseSchema, {
          executionId: entry.executionId,
          workflowId: entry.workflowId,
          workflowState: fromJson(WorkflowStateSchema, execution.workflowState as JsonValue, {
            ignoreUnknownFields: true,
          }),
          executionMetadata: executionMetadata(
            execution.entry,
            { retryOf: "ex_retried", retriedBy: "ex_retry" },
            execution.workflowVersion,
          ),
          limits,
        });
      expectSame(GetExecutionResponseSchema, answer);
    }
  });

  it("each entry's detail form, read as GET /api/v1/logs/{id} reads it, is written alike", async () => {
    const detail = { full: true, traceSpans: true, finalOutput: true, limits };
    for (const { id } of entries) {
      const found = await store.logs.getEntryView(id);
      if (!found) throw new Error(`log entry ${id} is missing`);
      // The seeder writes its spans and costs as the engine does, canonical: the answers write their stored
      // text.
      expect(found.entry.traceSpans).toStrictEqual({ canonicalJson: expect.any(String) });
      expect(found.entry.cost).toStrictEqual({ total: expect.any(Number), detailJson: expect.any(String) });
      const answer = () =>
        create(GetLogResponseSchema, { data: logEntryView(found.entry, found.workflow, detail), limits });
      expect(expectSameJson(GetLogResponseSchema, answer())).not.toEqual({ refused: true });
      expect(expectSameBinary(GetLogResponseSchema, answer())).not.toEqual({ refused: true });
    }
  });

  it("every stored trace span and JSON value is read as fromJson reads it", () => {
    // The seeder writes canonical spans, which a page hands on as their text.
    const spans = entries.flatMap((entry) => {
      const stored = entry.traceSpans;
      expect(stored).toStrictEqual({ canonicalJson: expect.any(String) });
      return (Array.isArray(stored) ? stored : JSON.parse(stored.canonicalJson)) as JsonValue[];
    });
    expect(spans.length).toBeGreaterThan(80);
    for (const span of spans) expectSameSpan(span);
    // ...and canonical costs, which a page with their detail hands on as their text too.
    for (const entry of entries)
      expect(entry.cost).toStrictEqual({ total: expect.any(Number), detailJson: expect.any(String) });
    for (const entry of entries) {
      expectSameValue(JSON.parse(entry.filesJson ?? "null") as JsonValue);
      expectSameValue(JSON.parse(entry.finalOutputJson ?? "null") as JsonValue);
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
    expectSame(GetLogResponseSchema, () => message);
  });
});

type Read = { message: Message } | { refused: true };

function read(build: () => Message): Read {
  try {
    return { message: build() };
  } catch {
    return { refused: true };
  }
}

/**
 * The same message, or a refusal on both sides. Read, it is written as the reflected one is (its values
 * kept as the stored JSON they were read from, StoredValue, written from that JSON), each form from a
 * read of its own; built, it equals the reflected one field for field and byte for byte.
 */
function expectSameRead(
  readFast: () => Message,
  reflected: Read,
  schema: DescMessage,
  answer: (message: Message) => GetLogResponse,
): Read {
  const fast = read(readFast);
  expect("message" in fast).toBe("message" in reflected);
  if ("message" in fast && "message" in reflected) {
    expectSameJson(GetLogResponseSchema, answer(fast.message));
    expectSameBinary(GetLogResponseSchema, answer(readFast()));
    expect(built(fast.message)).toEqual(reflected.message);
    expect(Buffer.from(toBinary(schema, fast.message))).toEqual(
      Buffer.from(toBinary(schema, reflected.message)),
    );
  }
  return reflected;
}

/** The message with each StoredValue in it as the Value it is built into when its kind is read. */
function built(message: unknown): unknown {
  if (message instanceof StoredValue) return { $typeName: message.$typeName, kind: built(message.kind) };
  if (Array.isArray(message)) return message.map(built);
  if (typeof message !== "object" || message === null) return message;
  const copy: Record<string, unknown> = Object.create(Object.getPrototypeOf(message));
  for (const key of Object.keys(message)) copy[key] = built((message as Record<string, unknown>)[key]);
  return copy;
}

/** How many spans expectSameSpan found canonical (isCanonicalTraceSpanList), each proven so by reflection. */
let canonicalSpans = 0;

function expectSameSpan(json: JsonValue): Read {
  const reflected = read(() => fromJson(TraceSpanSchema, json));
  // Text is taken as canonical when it is what reflection writes of the span it reads as (the text's own,
  // which JSON.stringify may have changed: Infinity becomes null), and only then. The one such text it
  // leaves out holds a non-finite double, a string in JSON, which the readers leave to fromJson.
  const text = JSON.stringify([json]);
  const stored = JSON.parse(text) as JsonValue[];
  let span: TraceSpan | undefined;
  let written: string | undefined;
  try {
    span = fromJson(TraceSpanSchema, stored[0] as JsonValue);
    written = `[${JSON.stringify(toJson(TraceSpanSchema, span, { alwaysEmitImplicit: true }))}]`;
  } catch {
    written = undefined;
  }
  const canonical = isCanonicalTraceSpanList(stored);
  if (canonical) expect(written).toBe(text);
  else if (written === text) expect(text).toMatch(/"(NaN|-?Infinity)"/);
  if (canonical && span) {
    canonicalSpans++;
    // The binary writers write stored canonical spans from their JSON, as reflection writes them read.
    const response = (executionData: ExecutionData) =>
      create(GetLogResponseSchema, { data: { executionData } });
    const generated = answerSerializers.get(GetLogResponseSchema.typeName);
    expect(Buffer.from(generated?.binary(response(new StoredExecutionData(text, undefined))) ?? [])).toEqual(
      Buffer.from(
        toBinary(GetLogResponseSchema, response(create(ExecutionDataSchema, { traceSpans: [span] }))),
      ),
    );
  }
  return expectSameRead(
    () => traceSpanFromJson(json),
    reflected,
    TraceSpanSchema,
    (span) => create(GetLogResponseSchema, { data: { executionData: { traceSpans: [span as TraceSpan] } } }),
  );
}

/**
 * A Value read from JSON as fromJson reads it, and from the text JSON.stringify writes of it (a stored
 * column: the answers hand that text on, valueFromStoredText) as fromJson reads that text's JSON.
 */
function expectSameValue(json: JsonValue): Read {
  const reflected = read(() => fromJson(ValueSchema, json));
  const asAnswer = (value: Message) => create(GetLogResponseSchema, { data: { files: value as Value } });
  const text = JSON.stringify(json);
  const stored = JSON.parse(text) as JsonValue;
  expectSameRead(
    () => valueFromStoredText(text, 2),
    read(() => fromJson(ValueSchema, stored)),
    ValueSchema,
    asAnswer,
  );
  return expectSameRead(() => valueFromJson(json), reflected, ValueSchema, asAnswer);
}

/** Ways stored JSON can stray from the canonical form; fromJson reads some of them and refuses the rest. */
const strays: ((span: JsonObject, random: ReturnType<typeof seededRandom>) => void)[] = [
  (span) => renameKey(span, "startTime", "start_time"),
  (span) => renameKey(span, "durationMs", "duration_ms"),
  (span, random) => {
    span[random.pick(Object.keys(span).concat("error", "tokens"))] = null;
  },
  (span, random) => {
    span.durationMs = random.pick<JsonValue>(["12", 2 ** 32, -1, 1.5, "abc", -0, true]);
  },
  (span, random) => {
    span.cost = random.pick<JsonValue>(["NaN", "Infinity", "-Infinity", "1.25", " 1", "", true, 1e308]);
  },
  (span) => {
    span.extra = 1;
  },
  (span, random) => reorder(span, random),
  (span, random) => {
    // A member left out: the writers write every member of implicit presence, zero or not.
    delete span[random.pick(Object.keys(span))];
  },
  (span, random) => {
    span.tokens = random.pick<JsonValue>([[], "x", { prompt: "1" }, { prompt: 1, extra: 2 }, { total: -1 }]);
  },
  (span, random) => {
    span.children = random.pick<JsonValue>([null, {}, [null], [1], [[]]]);
  },
  (span, random) => {
    span[random.pick(["id", "name", "model", "error"])] = random.pick<JsonValue>([
      5,
      "lone \ud800",
      false,
      {},
    ]);
  },
  (span) => {
    // An own "__proto__" key, as JSON.parse makes one: an unknown field to fromJson.
    Object.defineProperty(span, "__proto__", { value: { id: "x" }, enumerable: true, configurable: true });
  },
  (span) => {
    span.input = JSON.parse('{"__proto__": 1, "a": [1, {"__proto__": null}]}');
  },
  (span) => {
    // JSON.parse reads a number too large for a double as Infinity, which a Value cannot hold.
    span.output = JSON.parse('{"a": [1, 1e400]}');
  },
];

/** Ways a stored cost can stray from the canonical form (the detail of a ModelCost: modelStrays). */
const costStrays: ((cost: JsonObject, random: ReturnType<typeof seededRandom>) => void)[] = [
  (cost, random) => reorder(cost, random),
  (cost, random) => {
    delete cost[random.pick(Object.keys(cost).concat("total"))];
  },
  (cost) => {
    cost.extra = 1;
  },
  (cost, random) => {
    cost.total = random.pick<JsonValue>(["NaN", "Infinity", "1.5", null, -0, 1e308, true]);
  },
  (cost, random) => {
    cost.tokens = random.pick<JsonValue>([
      null,
      { prompt: "1", completion: 0, total: 0 },
      { prompt: 1, completion: 2, total: -1 },
      { prompt: 1, completion: 2, total: 3, extra: 1 },
      { completion: 2, prompt: 1, total: 3 },
      { prompt: 1, total: 3 },
    ]);
  },
  (cost, random) => {
    cost.models = random.pick<JsonValue>([[], null, "m", { m: null }, { m: [] }]);
  },
  (cost) => {
    // A model named "__proto__", an own key as JSON.parse makes one: the writers never write it.
    const models = isJsonObject(cost.models) ? cost.models : {};
    Object.defineProperty(models, "__proto__", {
      value: { input: 1, output: 1, total: 2 },
      enumerable: true,
      configurable: true,
    });
    cost.models = models;
  },
  (cost) => {
    cost.models = { "lone \ud800": { input: 1, output: 1, total: 2 } };
  },
];

const modelStrays: ((model: JsonObject, random: ReturnType<typeof seededRandom>) => void)[] = [
  (model, random) => reorder(model, random),
  (model, random) => {
    delete model[random.pick(Object.keys(model).concat("input"))];
  },
  (model, random) => {
    model[random.pick(["input", "output", "total"])] = random.pick<JsonValue>([
      "NaN",
      "2",
      null,
      Number.POSITIVE_INFINITY,
    ]);
  },
  (model, random) => {
    model.tokens = random.pick<JsonValue>([null, {}, { prompt: 1.5, completion: 0, total: 0 }]);
  },
];

/** Two members swapped: fromJson reads any order, the writers write field-number order. */
function reorder(object: JsonObject, random: ReturnType<typeof seededRandom>): void {
  const keys = Object.keys(object);
  const [a, b] = [random.int(0, keys.length - 1), random.int(0, keys.length - 1)];
  [keys[a], keys[b]] = [keys[b] as string, keys[a] as string];
  const members = keys.map((key) => [key, object[key] ?? null] as const);
  for (const key of keys) delete object[key];
  for (const [key, value] of members) object[key] = value;
}

/**
 * A random message of `schema` as toJson writes it, with its zero values written at the chance `implicit`
 * (otherwise left out); undefined when toJson refuses it. Most random messages hold a lone surrogate, which
 * fromJson refuses: most of the time, it is taken out.
 */
function randomJson(
  schema: DescMessage,
  random: ReturnType<typeof seededRandom>,
  implicit: number,
): JsonObject | undefined {
  const message = randomMessage(schema, random);
  let json: JsonObject;
  try {
    json = toJson(schema, message, { alwaysEmitImplicit: random.chance(implicit) }) as JsonObject;
  } catch {
    return undefined;
  }
  return random.chance(0.8) ? JSON.parse(JSON.stringify(json).replace(loneSurrogate, "?")) : json;
}

/** A lone surrogate as JSON.stringify escapes it (a well-formed pair is written as it is). */
const loneSurrogate = /\\ud[89a-f][0-9a-f]{2}/g;

function renameKey(span: JsonObject, from: string, to: string): void {
  if (!(from in span)) return;
  span[to] = span[from] ?? null;
  delete span[from];
}

/** The items with the first one's slot left empty: a sparse array, which JSON.stringify writes with null. */
function withHole(items: unknown[]): unknown[] {
  const holed = [...items];
  delete holed[0];
  return holed;
}

/** The items, with an own toJSON, which JSON.stringify calls in place of writing them. */
function withToJson<T>(items: T[]): T[] {
  return Object.assign([...items], { toJSON: () => "not the items" });
}

/**
 * The object with a toJSON JSON.stringify calls though Object.keys does not list it (not enumerable), its
 * members reordered: the text it writes is not the members the check read.
 */
function withHiddenToJson<T extends object>(value: T): T {
  const reordered = Object.fromEntries(Object.entries(value).reverse());
  return Object.defineProperty(value, "toJSON", { value: () => reordered, enumerable: false });
}

/** A chain `depth` deep: spans in spans through `children`, or arrays in arrays under `input`. */
function nested(depth: number, through: "children" | "input"): JsonValue {
  let json: JsonValue = through === "children" ? { id: "leaf" } : [];
  for (let i = 1; i < depth; i++)
    json = through === "children" ? { id: `level ${i}`, children: [json] } : [json];
  return through === "children" ? json : { id: "root", input: json };
}

describe("readers of stored JSON", () => {
  it("3,000 random trace spans, canonical and strayed, are read as fromJson reads them, refusals included", () => {
    canonicalSpans = 0;
    const random = seededRandom(1313);
    const outcomes = { read: 0, refused: 0 };
    for (let i = 0; i < 3_000; i++) {
      const json = randomJson(TraceSpanSchema, random, 0.5);
      if (json === undefined) continue;
      const child = Array.isArray(json.children) ? json.children[0] : undefined;
      if (isJsonObject(child) && random.chance(0.3)) random.pick(strays)(child, random);
      if (random.chance(0.4)) random.pick(strays)(json, random);
      const outcome = expectSameSpan(json);
      outcomes["message" in outcome ? "read" : "refused"]++;
    }
    expect(outcomes.read).toBeGreaterThan(1_000);
    expect(outcomes.refused).toBeGreaterThan(300);
    // Canonical and not, both well represented: toJson's output with alwaysEmitImplicit and without.
    expect(canonicalSpans).toBeGreaterThan(250);
  });

  it("a value kept as stored JSON is written as built once its kind is read or set", () => {
    const read = valueFromJson({ a: [1, "b"] });
    expect(read).toBeInstanceOf(StoredValue);
    expect(valueJson(read)).toBe('{"a":[1,"b"]}');
    const kind = read.kind;
    if (kind.case !== "structValue") throw new Error(`read as ${kind.case}`);
    kind.value.fields.c = valueFromJson(null);
    expect(valueJson(read)).toBe('{"a":[1,"b"],"c":null}');
    const set = valueFromJson({ a: 1 });
    set.kind = { case: "boolValue", value: true };
    expect(valueJson(set)).toBe("true");
    expect(Buffer.from(toBinary(ValueSchema, set))).toEqual(
      Buffer.from(toBinary(ValueSchema, valueFromJson(true))),
    );
  });

  it("3,000 random costs, canonical and strayed: one taken as canonical is written as its stored text", () => {
    const random = seededRandom(5353);
    const counts = { canonical: 0, not: 0 };
    for (let i = 0; i < 3_000; i++) {
      const json = randomJson(CostSchema, random, 0.7);
      if (json === undefined) continue;
      const model = isJsonObject(json.models) ? Object.values(json.models)[0] : undefined;
      if (isJsonObject(model) && random.chance(0.3)) random.pick(modelStrays)(model, random);
      if (random.chance(0.4)) random.pick(costStrays)(json, random);
      // What the store keeps (executionRows): the total in its column, the rest as JSON text, checked.
      const { total, tokens, models } = json;
      const canonical = isCanonicalCostJson({ total, tokens, models });
      const detailJson = JSON.stringify({ tokens, models });
      // Text the check refuses is never written as it is; when it would have been written the same, it
      // holds a double the mapping writes as a string or a lone surrogate, which the check leaves out, or
      // has no tokens, which a stored cost always has (CostRecord; the check refuses the undefined member),
      // or an object that is not plain data (toJson set a map's prototype from a model named "__proto__").
      let written: string | undefined;
      try {
        const parsed = JSON.parse(JSON.stringify({ total, tokens, models }));
        written = JSON.stringify(
          toJson(CostSchema, fromJson(CostSchema, parsed), { alwaysEmitImplicit: true }),
        );
      } catch {
        written = undefined;
      }
      if (!canonical) {
        counts.not++;
        const text = JSON.stringify({ total, tokens, models });
        if (written === text && tokens !== undefined && !isCanonicalCostJson(JSON.parse(text)))
          expect(text).toMatch(/"(NaN|-?Infinity)"|\\ud[89a-f]/);
        continue;
      }
      counts.canonical++;
      const asAnswer = (value: Cost) => create(GetLogResponseSchema, { data: { cost: value } });
      const stored = () => asAnswer(new StoredCost(total as number, detailJson));
      // Reflection reads the stored cost's fields; the writers write its text, or from its fields in binary.
      const text = expectSameJson(GetLogResponseSchema, stored());
      expect(text).toEqual({ text: expect.stringContaining(`"cost":{"total":${JSON.stringify(total)},`) });
      expectSameBinary(GetLogResponseSchema, stored());
      // ...and they write what the cost built from the same columns writes, as the answers did before.
      const built = asAnswer(fullCost({ total: total as number, ...JSON.parse(detailJson) }));
      expect(expectSameJson(GetLogResponseSchema, built)).toEqual(text);
    }
    // Both well represented (565 and over 2,000 with this seed).
    expect(counts.canonical).toBeGreaterThan(400);
    expect(counts.not).toBeGreaterThan(1_000);
  });

  it("a stored cost is written as stored until its tokens or models are read or set; its total as it stands", () => {
    const detailJson = JSON.stringify({
      tokens: { prompt: 1, completion: 2, total: 3 },
      models: {
        m: { input: 0.5, output: 0.25, total: 0.75, tokens: { prompt: 1, completion: 2, total: 3 } },
      },
    });
    expect(isCanonicalCostJson({ total: 0.75, ...JSON.parse(detailJson) })).toBe(true);
    const write = (cost: Cost) =>
      expectSameJson(GetLogResponseSchema, create(GetLogResponseSchema, { data: { cost } }));
    expect(write(new StoredCost(0.75, detailJson))).toEqual({
      text: expect.stringContaining(`"cost":{"total":0.75,${detailJson.slice(1)}`),
    });
    const totalSet = new StoredCost(0.75, detailJson);
    totalSet.total = Number.NaN;
    expect(write(totalSet)).toEqual({ text: expect.stringContaining('"cost":{"total":"NaN","tokens"') });
    const modelsSet = new StoredCost(0.75, detailJson);
    modelsSet.models = {};
    expect(write(modelsSet)).toEqual({ text: expect.stringContaining('"models":{}') });
    const changed = new StoredCost(0.75, detailJson);
    (changed.tokens as Cost["tokens"] & object).prompt = 7;
    expect(write(changed)).toEqual({ text: expect.stringContaining('"tokens":{"prompt":7,') });
  });

  it("stored spans are written as stored until their field is read or set, then as the field is", () => {
    const text = JSON.stringify([
      { id: "a", name: "", type: "", status: "", startTime: "", endTime: "", durationMs: 0, children: [] },
    ]);
    expect(isCanonicalTraceSpanList(JSON.parse(text))).toBe(true);
    const write = (data: ExecutionData) =>
      expectSameJson(GetLogResponseSchema, create(GetLogResponseSchema, { data: { executionData: data } }));
    expect(write(new StoredExecutionData(text, undefined))).toEqual({
      text: expect.stringContaining(`"traceSpans":${text}`),
    });
    const set = new StoredExecutionData(text, undefined);
    set.traceSpans = [];
    expect(write(set)).toEqual({ text: expect.stringContaining('"traceSpans":[]') });
    const changed = new StoredExecutionData(text, undefined);
    (changed.traceSpans[0] as TraceSpan).id = "b";
    expect(write(changed)).toEqual({ text: expect.stringContaining('"id":"b"') });
  });

  it("spans not made by JSON.parse are canonical only when JSON.stringify writes what the check read", () => {
    const span = () => ({
      id: "a",
      name: "n",
      type: "t",
      status: "ok",
      startTime: "s",
      endTime: "e",
      durationMs: 1,
      input: { when: "x" } as unknown,
      children: [] as unknown[],
    });
    expect(isCanonicalTraceSpanList([span()])).toBe(true);
    expect(isCanonicalTraceSpanList([Object.assign(Object.create(null), span())])).toBe(true);
    const strays: [string, (s: ReturnType<typeof span>) => unknown][] = [
      ["a Date in a Value", (s) => Object.assign(s, { input: new Date(0) })],
      ["a boxed string in a Value", (s) => Object.assign(s, { input: { when: new String("x") } })],
      ["a Map in a Value", (s) => Object.assign(s, { input: new Map() })],
      ["a toJSON in a Value", (s) => Object.assign(s, { input: { toJSON: () => 1 } })],
      ["a hole in a Value's array", (s) => Object.assign(s, { input: withHole([1, 2, 3]) })],
      ["a hole among the children", (s) => Object.assign(s, { children: withHole([span(), span()]) })],
      ["a toJSON on a Value's array", (s) => Object.assign(s, { input: withToJson([1, 2, 3]) })],
      ["a toJSON on the children", (s) => Object.assign(s, { children: withToJson([span()]) })],
      ["a hidden toJSON on the span", (s) => withHiddenToJson(s)],
      ["a hidden toJSON on a Value", (s) => Object.assign(s, { input: withHiddenToJson({ when: "x" }) })],
      [
        "a hidden toJSON on the tokens",
        (s) => Object.assign(s, { tokens: withHiddenToJson({ prompt: 1, completion: 2, total: 3 }) }),
      ],
      ["undefined in a Value", (s) => Object.assign(s, { input: { when: undefined } })],
      ["a class instance as the span", (s) => Object.setPrototypeOf(s, class Span {}.prototype)],
      ["an inherited member", (s) => Object.setPrototypeOf(s, { extra: 1 })],
    ];
    for (const [what, stray] of strays) {
      const spans = [span()];
      stray(spans[0] as ReturnType<typeof span>);
      expect({ what, canonical: isCanonicalTraceSpanList(spans) }).toEqual({ what, canonical: false });
    }
    expect(isCanonicalTraceSpanList(withToJson([span()]))).toBe(false);
    // A member named toJSON that is data, not a function, is written as a member like any other.
    expect(isCanonicalTraceSpanList([Object.assign(span(), { input: { toJSON: 1 } })])).toBe(true);
    const polluted = Object.prototype as { toJSON?: () => unknown };
    polluted.toJSON = () => "polluted";
    try {
      expect(isCanonicalTraceSpanList([span()])).toBe(false);
    } finally {
      delete polluted.toJSON;
    }
    expect(isCanonicalTraceSpanList([span()])).toBe(true);
  });

  it("stored JSON text is written as it is only when reading it would write the same text", () => {
    const kept = (text: string) => valueFromStoredText(text, 2) instanceof StoredValue;
    const keptText = (text: string) => {
      const value = valueFromStoredText(text, 2);
      return value instanceof StoredValue ? value.storedText() : undefined;
    };
    for (const text of [
      '{"a":[1,2.5,"x\\"y",null,true],"b":{}}',
      '"__proto"',
      "null",
      "[]",
      "-1.5e-7",
      '"\\ud800"',
    ]) {
      expect(keptText(text), text).toBe(text);
      expectSameValue(JSON.parse(text) as JsonValue);
    }
    // A "__proto__" key sets a prototype when fromJson reads it: the text is read as fromJson reads it.
    const proto = '{"__proto__":{"x":1},"y":2}';
    expect(keptText(proto)).toBeUndefined();
    expect(JSON.parse(valueJson(valueFromStoredText(proto, 2)))).toEqual({ y: 2 });
    expect(kept('{"note":"__proto__"}')).toBe(true);
    // Brackets inside strings are not nesting.
    expect(keptText(`"${"[".repeat(200)}"`)).toBe(`"${"[".repeat(200)}"`);
    // Past the depth limit it is refused as fromJson refuses it, not written.
    for (const depth of [97, 98, 99, 100]) {
      const text = `${"[".repeat(depth)}${"]".repeat(depth)}`;
      expectSameValue(JSON.parse(text) as JsonValue);
    }
    expect(() => valueJson(valueFromStoredText(`${"[".repeat(120)}${"]".repeat(120)}`, 2))).toThrow();
  });

  it("nesting at fromJson's depth limit is read or refused at the same level", () => {
    for (let depth = 95; depth <= 102; depth++) {
      expectSameSpan(nested(depth, "children"));
      expectSameSpan(nested(depth, "input"));
      expectSameValue((nested(depth, "input") as JsonObject).input as JsonValue);
    }
    expect(expectSameSpan(nested(100, "children"))).not.toEqual({ refused: true });
    expect(expectSameSpan(nested(101, "children"))).toEqual({ refused: true });
  });
});
