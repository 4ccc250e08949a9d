import { fromJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { NullValue, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";

/*
 * The pieces of the JSON readers that protoc-gen-serializers generates into gen/. A reader builds what
 * protobuf-es's `fromJson` builds from the canonical form of a message's protobuf JSON (JSON names, each
 * value of its field's own JSON type), without reflection; on anything else it answers undefined and the
 * caller hands the JSON to `fromJson`, which reads it or refuses it as before. Each check below accepts
 * exactly what `fromJson` takes as it is, and depths count as `fromJson` counts them.
 */

/** `fromJson`'s default recursion limit: anything nested deeper, it refuses. */
export const maxDepth = 100;

export function isJsonObject(json: JsonValue | undefined): json is JsonObject {
  return typeof json === "object" && json !== null && !Array.isArray(json);
}

/** `fromJson` refuses a string that is not valid UTF-16 (a lone surrogate), as UTF-8 cannot carry it. */
export function isWellFormedString(json: JsonValue | undefined): json is string {
  // String.prototype.isWellFormed is ES2024: Node 20 has it, the ES2023 lib this compiles against does not.
  return typeof json === "string" && (json as unknown as { isWellFormed(): boolean }).isWellFormed();
}

export function isUint32(json: JsonValue | undefined): json is number {
  return typeof json === "number" && Number.isInteger(json) && json >= 0 && json <= 0xffffffff;
}

/** A double as a finite number; "NaN", "Infinity" and numeric strings take `fromJson`'s own path. */
export function isFiniteNumber(json: JsonValue | undefined): json is number {
  return typeof json === "number" && Number.isFinite(json);
}

/**
 * google.protobuf.Value from any JSON, as `fromJson`'s valueFromJson builds it when it is `depth` deep
 * (a Value field of a message at depth d is read at d + 2: one for the message, one for its JSON form).
 * JSON that the message would write back as JSON.stringify writes it (the usual case: stored JSON was
 * written by JSON.stringify) is kept as it is, in a StoredValue; anything else is built at once.
 */
export function readValue(json: JsonValue | undefined, depth: number): Value | undefined {
  if (isPlainJson(json, depth)) return new StoredValue(json, depth);
  return buildValue(json, depth);
}

/**
 * True when `json`, read as a Value `depth` deep, is what its canonical JSON text is, so that
 * `JSON.stringify(json)` writes what the built Value's writer would: within fromJson's depth limit, every
 * number finite (JSON.parse reads 1e400 as Infinity, which a Value refuses), and no own "__proto__" key
 * (JSON.parse makes one; reading it into a Struct sets a prototype instead, so it is written nowhere).
 * It also holds `json` to being data (isDataObject, isDataArray, no holes), so that it may be given
 * values that did not come from JSON.parse (isCanonical<Message>List).
 */
export function isPlainJson(json: unknown, depth: number): json is JsonValue {
  if (depth > maxDepth) return false;
  switch (typeof json) {
    case "number":
      return Number.isFinite(json);
    case "string":
    case "boolean":
      return true;
    case "object": {
      if (json === null) return true;
      if (Array.isArray(json)) {
        return isDataArray(json) && everyItem(json, (item) => isPlainJson(item, depth + 1));
      }
      if (!isDataObject(json)) return false;
      for (const key of Object.keys(json)) {
        if (key === "__proto__" || !isPlainJson(json[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * An object JSON.stringify writes as its own enumerable members: its prototype Object.prototype or none,
 * so no Date, boxed primitive, Map or class instance, whose JSON is not their members; and no toJSON
 * function, which JSON.stringify calls even when it is not enumerable and Object.keys does not list it. What
 * JSON.parse makes always is one (a member named toJSON is data there).
 */
export function isDataObject(value: unknown): value is JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return (
    (prototype === Object.prototype || prototype === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== "function"
  );
}

/**
 * An array JSON.stringify writes as its items: a plain Array with no toJSON of its own (what JSON.parse
 * makes always is one).
 */
export function isDataArray(value: unknown): value is JsonValue[] {
  return (
    Array.isArray(value) &&
    Object.getPrototypeOf(value) === Array.prototype &&
    !Object.hasOwn(value, "toJSON")
  );
}

/** Whether `test` holds of every item, holes read as undefined (which JSON.stringify writes as null). */
export function everyItem(items: readonly unknown[], test: (item: unknown) => boolean): boolean {
  for (let i = 0; i < items.length; i++) if (!test(items[i])) return false;
  return true;
}

/**
 * Whether every member of a map field's object passes `test`, under a key the writers write as
 * JSON.stringify does: well formed, and not `__proto__`, which jsonObjectOf leaves out as toJson does.
 */
export function everyMember(object: JsonObject, test: (value: unknown) => boolean): boolean {
  for (const key of Object.keys(object)) {
    if (key === "__proto__" || !isWellFormedString(key) || !test(object[key])) return false;
  }
  return true;
}

/** Whether JSON.stringify calls no toJSON but a data value's own: none was added to Object or Array. */
export function noInheritedToJson(): boolean {
  return !("toJSON" in Array.prototype);
}

/**
 * A Value read from plain JSON (isPlainJson), built only when something reads its `kind`: the JSON
 * answers write `JSON.stringify` of it (valueJson) and the binary ones write it straight from the JSON
 * (WireWriter.jsonValue), which costs a stored trace span a fraction of building its values and writing
 * them out one by one (issue 13). Reflection reads `kind`, and from then on the built Value is the
 * message, so a change made to it is written.
 *
 * Made from stored text (valueFromStoredText), it keeps the text as well and parses it only when asked for
 * the JSON: the JSON answers write the text as it is (issue 53: parsing and writing back each entry's
 * final output was a share of an export's time and of its garbage).
 */
export class StoredValue implements Value {
  readonly $typeName = "google.protobuf.Value";
  #kind: Value["kind"] | undefined;
  #json: JsonValue | undefined;
  readonly #text: string | undefined;
  readonly #depth: number;

  constructor(json: JsonValue, depth: number);
  constructor(json: undefined, depth: number, text: string);
  constructor(json: JsonValue | undefined, depth: number, text?: string) {
    this.#json = json;
    this.#depth = depth;
    this.#text = text;
  }

  get kind(): Value["kind"] {
    if (this.#kind === undefined) this.#kind = (buildValue(this.#parsed(), this.#depth) as Value).kind;
    return this.#kind;
  }

  set kind(kind: Value["kind"]) {
    this.#kind = kind;
  }

  /** The JSON the Value holds, while nothing has read or set its `kind`; undefined after. */
  storedJson(): JsonValue | undefined {
    return this.#kind === undefined ? this.#parsed() : undefined;
  }

  /** Its JSON text, when it was made from text and nothing has read or set its `kind`. */
  storedText(): string | undefined {
    return this.#kind === undefined ? this.#text : undefined;
  }

  #parsed(): JsonValue {
    if (this.#json === undefined) this.#json = JSON.parse(this.#text as string) as JsonValue;
    return this.#json;
  }
}

/**
 * A Value of JSON text that JSON.stringify wrote (a stored column: executionRows), read `depth` deep:
 * kept as its text when parsing it would give plain JSON (isPlainJson) that JSON.stringify writes back as
 * the same text, which holds of JSON.stringify's own text unless it has a "__proto__" key or nests past
 * fromJson's limit, looked for here in the text without parsing it; parsed and read at once otherwise.
 */
export function valueFromStoredText(text: string, depth: number): Value {
  if (!text.includes('"__proto__"') && nestsWithin(text, maxDepth - depth)) {
    return new StoredValue(undefined, depth, text);
  }
  const json = JSON.parse(text) as JsonValue;
  return readValue(json, depth) ?? fromJson(ValueSchema, json);
}

/** Whether JSON `text` opens no more than `limit` arrays or objects inside one another. */
function nestsWithin(text: string, limit: number): boolean {
  // Nesting past the limit takes more brackets than that: a short text needs no look.
  if (text.length <= limit) return true;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return false;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return true;
}

/** readValue's Value built at once, node for node. */
function buildValue(json: JsonValue | undefined, depth: number): Value | undefined {
  if (depth > maxDepth) return undefined;
  switch (typeof json) {
    case "number":
      return value({ case: "numberValue", value: json });
    case "string":
      return value({ case: "stringValue", value: json });
    case "boolean":
      return value({ case: "boolValue", value: json });
    case "object": {
      if (json === null) return value({ case: "nullValue", value: NullValue.NULL_VALUE });
      if (Array.isArray(json)) {
        const values: Value[] = [];
        for (const item of json) {
          const read = buildValue(item, depth + 1);
          if (read === undefined) return undefined;
          values.push(read);
        }
        return value({ case: "listValue", value: { $typeName: "google.protobuf.ListValue", values } });
      }
      const fields: Record<string, Value> = {};
      for (const [key, item] of Object.entries(json)) {
        const read = buildValue(item, depth + 1);
        if (read === undefined) return undefined;
        // Assigned as fromJson assigns it: a "__proto__" key sets the prototype and is no entry.
        fields[key] = read;
      }
      return value({ case: "structValue", value: { $typeName: "google.protobuf.Struct", fields } });
    }
    default:
      return undefined;
  }
}

/** `fromJson(ValueSchema, json)`, read without reflection when it can be. */
function value(kind: Value["kind"]): Value {
  return { $typeName: "google.protobuf.Value", kind };
}

export function valueFromJson(json: JsonValue): Value {
  return readValue(json, 2) ?? fromJson(ValueSchema, json);
}

/**
 * The key of a message's stored lists: a message that keeps a list field as the text it was stored as
 * (canonical JSON, checked when it was written) answers that text for the field until something reads it.
 */
export const storedLists = Symbol("storedLists");

/** A message with stored lists (see storedLists). */
export interface WithStoredLists {
  [storedLists](field: string): string | undefined;
}

/** The text the generated JSON writers write for `message`'s list `field`, when the message keeps one. */
export function storedListJson(message: object, field: string): string | undefined {
  return (message as Partial<WithStoredLists>)[storedLists]?.(field);
}

/**
 * A message a view keeps whole as the canonical JSON text it was stored as (a log entry's cost, issue 53;
 * the plugin's `stored=` option): the generated JSON writers write that text as it is. The message answers
 * undefined once its fields were read as messages, which may since have changed, and is then written as
 * any other.
 */
export const storedText = Symbol("storedText");

/** A message with its stored text (see storedText). */
export interface WithStoredText {
  [storedText](): string | undefined;
}

/** The text the generated JSON writers write for `message`, when it keeps one. */
export function storedMessageJson(message: object): string | undefined {
  return (message as Partial<WithStoredText>)[storedText]?.();
}
