import {
  create,
  type DescField,
  type DescMessage,
  type JsonValue,
  type Message,
  ScalarType,
} from "@bufbuild/protobuf";
import { type ListValue, NullValue, type Struct, type Value } from "@bufbuild/protobuf/wkt";
import { leaveOut } from "../../src/codegen/serializers/runtime/presence.js";
import type { seededRandom } from "./random.js";

type Random = ReturnType<typeof seededRandom>;

/**
 * Where a value goes: how deep, and whether it must be writable. A part marked with `leaveOut` is never
 * written by the generated serialisers, while toJsonWithPresence writes it and then deletes it, so a value
 * JSON cannot hold (NaN in a Value) is refused there only: the one place the two differ, kept out of the
 * comparison.
 */
interface Place {
  depth: number;
  writable: boolean;
}

/**
 * Strings that stress a writer: empty, escapes, control characters, line and paragraph separators, non-BMP
 * characters, lone surrogates (JSON.stringify escapes them; UTF-8 writes U+FFFD), `__proto__` (a map key a
 * plain object cannot hold), integer-like keys (objects order them first) and long ones.
 */
const strings = [
  "",
  "a",
  "flowlog",
  'quote " and backslash \\',
  "tab\tnewline\ncarriage\r",
  "\u0000\u0001\u001f\u007f",
  "\u2028\u2029",
  "héllo wörld",
  "日本語のテキスト",
  "emoji 😀 and 𝄞",
  "\ud800",
  "lone \udc00 low",
  "end high \ud83d",
  "__proto__",
  "constructor",
  "0",
  "10",
  "2",
  "x".repeat(200),
  "ü".repeat(70),
];

const doubles = [
  0,
  -0,
  1,
  -1,
  0.1,
  1e-9,
  123.456789,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  -Number.MAX_VALUE,
  1e21,
  1e-7,
  2 ** 53 + 2,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
];

const finiteDoubles = doubles.filter(Number.isFinite);

/** uint32 values, with a few out of range or fractional: toBinary refuses them, toJson writes them. */
const uint32s = [0, 1, 127, 128, 16_383, 16_384, 2 ** 31, 2 ** 32 - 1, 42];
const badUint32s = [-1, 1.5, 2 ** 32, Number.NaN];

/**
 * A message of `schema` with random contents, assigned straight to its properties (bypassing checks, so the
 * odd invalid value goes in): each field unset, zero or filled, lists and maps empty or not, some of them
 * marked with D30's `leaveOut`, now and then an unknown field.
 */
export function randomMessage(
  schema: DescMessage,
  random: Random,
  place: Place = { depth: 0, writable: false },
): Message {
  const special = randomWellKnown(schema, random, place);
  if (special) return special;
  const message = create(schema) as Message & Record<string, unknown>;
  const markable = schema.fields.filter((f) => f.fieldKind === "list" || f.fieldKind === "map");
  const marked = random.chance(0.3) ? random.subset(markable).map((f) => f.localName) : [];
  for (const field of schema.fields) {
    const writable = place.writable || marked.includes(field.localName);
    const value = randomField(field, random, { depth: place.depth, writable });
    if (value !== undefined) message[field.localName] = value;
  }
  if (marked.length > 0) leaveOut(message, ...(marked as never[]));
  if (random.chance(0.05)) {
    message.$unknown = [{ no: 999, wireType: 2, data: new Uint8Array([3, 1, 2, 3]) }];
  }
  return message;
}

function randomField(field: DescField, random: Random, place: Place): unknown {
  const deep = place.depth >= 3;
  const inner = { ...place, depth: place.depth + 1 };
  switch (field.fieldKind) {
    case "scalar":
      if (field.proto.proto3Optional && random.chance(0.5)) return undefined;
      return randomScalar(field.scalar, random);
    case "enum":
      return random.pick(field.enum.values).number;
    case "message":
      if (deep || random.chance(0.3)) return undefined;
      if (field.message.typeName === "google.protobuf.Struct") return randomJsonObject(random, inner);
      return randomMessage(field.message, random, inner);
    case "list": {
      const count = deep ? 0 : random.int(0, 3);
      return Array.from({ length: count }, () =>
        field.listKind === "message"
          ? randomMessage(field.message, random, inner)
          : field.listKind === "scalar"
            ? randomScalar(field.scalar, random)
            : 0,
      );
    }
    case "map": {
      const map: Record<string, unknown> = JSON.parse("{}");
      const count = deep ? 0 : random.int(0, 3);
      for (let i = 0; i < count; i++) {
        const value =
          field.mapKind === "message"
            ? randomMessage(field.message, random, inner)
            : randomScalar(ScalarType.STRING, random);
        setKey(map, random.pick(strings), value);
      }
      return map;
    }
  }
}

/** defineProperty, so that `__proto__` becomes a key rather than the prototype, as JSON.parse makes it. */
function setKey(object: object, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function randomScalar(scalar: ScalarType, random: Random): unknown {
  switch (scalar) {
    case ScalarType.STRING:
      return random.pick(strings);
    case ScalarType.DOUBLE:
      return random.chance(0.5) ? random.pick(doubles) : (random.next() - 0.5) * 10 ** random.int(-5, 12);
    case ScalarType.UINT32:
      if (random.chance(0.03)) return random.pick(badUint32s);
      return random.chance(0.5) ? random.pick(uint32s) : random.int(0, 2 ** 32 - 1);
    case ScalarType.BOOL:
      return random.chance(0.5);
    default:
      throw new Error(`no random values for scalar type ${ScalarType[scalar]} yet`);
  }
}

/** Value, Struct and ListValue are built from random JSON, now and then with a value JSON cannot hold. */
function randomWellKnown(schema: DescMessage, random: Random, place: Place): Message | undefined {
  switch (schema.typeName) {
    case "google.protobuf.Value":
      return randomValue(random, place);
    case "google.protobuf.Struct":
      return randomStruct(random, place);
    case "google.protobuf.ListValue":
      return randomList(random, place);
    default:
      return undefined;
  }
}

function randomValue(random: Random, place: Place): Value {
  const value = (kind: Value["kind"]): Value => ({ $typeName: "google.protobuf.Value", kind });
  const unwritable = !place.writable && random.chance(0.02);
  if (unwritable && random.chance(0.5)) return value({ case: undefined });
  const inner = { ...place, depth: place.depth + 1 };
  switch (random.int(1, place.depth >= 4 ? 4 : 6)) {
    case 1:
      return value({
        case: "nullValue",
        value: random.chance(0.9) ? NullValue.NULL_VALUE : (random.pick([3, -1, -2147483648]) as NullValue),
      });
    case 2:
      return value({ case: "numberValue", value: unwritable ? Number.NaN : random.pick(finiteDoubles) });
    case 3:
      return value({ case: "stringValue", value: random.pick(strings) });
    case 4:
      return value({ case: "boolValue", value: random.chance(0.5) });
    case 5:
      return value({ case: "structValue", value: randomStruct(random, inner) });
    default:
      return value({ case: "listValue", value: randomList(random, inner) });
  }
}

function randomStruct(random: Random, place: Place): Struct {
  const fields: Record<string, Value> = JSON.parse("{}");
  for (let i = random.int(0, 3); i > 0; i--) setKey(fields, random.pick(strings), randomValue(random, place));
  return { $typeName: "google.protobuf.Struct", fields };
}

function randomList(random: Random, place: Place): ListValue {
  const values = Array.from({ length: random.int(0, 3) }, () => randomValue(random, place));
  return { $typeName: "google.protobuf.ListValue", values };
}

/** A Struct field outside Value holds a plain JsonObject in protobuf-es (Block.config). */
function randomJsonObject(random: Random, place: Place): Record<string, JsonValue> {
  const object: Record<string, JsonValue> = JSON.parse("{}");
  const inner = { ...place, depth: place.depth + 1 };
  for (let i = random.int(0, 3); i > 0; i--) setKey(object, random.pick(strings), randomJson(random, inner));
  return object;
}

function randomJson(random: Random, place: Place): JsonValue {
  const unwritable = !place.writable && random.chance(0.02);
  switch (random.int(1, place.depth >= 4 ? 4 : 6)) {
    case 1:
      return null;
    case 2:
      return unwritable ? Number.NaN : random.pick(finiteDoubles);
    case 3:
      return random.pick(strings);
    case 4:
      // undefined is no JSON: protobuf-es makes it a Value with no kind.
      return unwritable ? (undefined as unknown as JsonValue) : random.chance(0.5);
    case 5:
      return randomJsonObject(random, place);
    default:
      return Array.from({ length: random.int(0, 3) }, () =>
        randomJson(random, { ...place, depth: place.depth + 1 }),
      );
  }
}
