import {
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type JsonWriteOptions,
  type Message,
  toJson,
} from "@bufbuild/protobuf";

/**
 * D30: a part the caller did not ask for is absent, one asked for and empty is present. proto3 gives a
 * list or map no presence, and the JSON the API writes emits implicit fields (D7: `cost.total: 0` is a
 * fact), so an empty `traceSpans` would be written `[]` whether asked for or not. A view marks on the
 * message object the fields it leaves out; `toJsonWithPresence` writes the JSON without them, and so do
 * the generated serialisers (protoc-gen-serializers), which read the marks with `leftOutOf`. The binary
 * form needs nothing: an empty list is absent there anyway.
 */
const leftOutKey = Symbol("flowlog.leftOut");
type Marked = { [leftOutKey]?: ReadonlySet<string> };
const markedTypes = new Set<string>();

/**
 * The fields a mark applies to: lists and maps. Every other field can have presence of its own (a message
 * field, or a proto3 `optional` scalar), and the generated serialisers look for marks on lists and maps only.
 */
export type ListOrMapField<T> = {
  [K in keyof T]: T[K] extends readonly unknown[] ? K : string extends keyof T[K] ? K : never;
}[keyof T] &
  string;

/**
 * Marks `fields` (local names) of `message` as not asked for; returns the message. The mark is a symbol
 * property rather than a WeakMap entry: a page marks every entry, and a WeakMap entry cost ten times as much
 * (issue 13). Reflection (toJson, toBinary, equals) reads declared fields only, so it never sees the mark.
 */
export function leaveOut<T extends Message>(message: T, ...fields: ListOrMapField<T>[]): T {
  const marked = message as T & Marked;
  const current = marked[leftOutKey];
  marked[leftOutKey] = current ? new Set([...current, ...fields]) : markSet(fields);
  if (!markedTypes.has(message.$typeName)) {
    markedTypes.add(message.$typeName);
    reachCache.clear();
  }
  return message;
}

/** The fields of `message` marked with `leaveOut`, if any. */
export function leftOutOf(message: object): ReadonlySet<string> | undefined {
  return (message as Marked)[leftOutKey];
}

/** One set per list of fields, shared by every message marked with it. */
const markSets = new Map<string, ReadonlySet<string>>();

function markSet(fields: string[]): ReadonlySet<string> {
  const key = fields.join(",");
  let set = markSets.get(key);
  if (!set) {
    set = new Set(fields);
    markSets.set(key, set);
  }
  return set;
}

/** `toJson`, less the fields marked with `leaveOut` anywhere in the message. */
export function toJsonWithPresence(
  schema: DescMessage,
  message: Message,
  options?: Partial<JsonWriteOptions>,
) {
  const json = toJson(schema, message, options);
  if (mayHoldMarks(schema)) prune(schema, message, json, options?.useProtoFieldName ?? false);
  return json;
}

function prune(schema: DescMessage, message: Message, json: JsonValue, protoNames: boolean): void {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return;
  const object = json as JsonObject;
  const omitted = leftOutOf(message);
  for (const field of schema.fields) {
    const key = protoNames ? field.name : field.jsonName;
    if (omitted?.has(field.localName)) {
      delete object[key];
      continue;
    }
    const child = field.message;
    if (!child || !mayHoldMarks(child) || object[key] === undefined) continue;
    const value = fieldValue(message, field);
    if (field.fieldKind === "message" && value) {
      prune(child, value as Message, object[key], protoNames);
    } else if (field.fieldKind === "list") {
      const items = object[key] as JsonValue[];
      for (const [index, item] of (value as Message[]).entries()) {
        prune(child, item, items[index] ?? null, protoNames);
      }
    } else if (field.fieldKind === "map") {
      const entries = object[key] as JsonObject;
      for (const [mapKey, item] of Object.entries(value as Record<string, Message>)) {
        prune(child, item, entries[mapKey] ?? null, protoNames);
      }
    }
  }
}

function fieldValue(message: Message, field: DescField): unknown {
  const record = message as unknown as Record<string, unknown>;
  if (!field.oneof) return record[field.localName];
  const selected = record[field.oneof.localName] as { case?: string; value?: unknown };
  return selected.case === field.localName ? selected.value : undefined;
}

/** Whether a message of `schema` can contain a marked message; well-known types are written as values. */
const reachCache = new Map<string, boolean>();

function mayHoldMarks(schema: DescMessage, visiting = new Set<string>()): boolean {
  const cached = reachCache.get(schema.typeName);
  if (cached !== undefined) return cached;
  if (markedTypes.has(schema.typeName)) return remember(schema, true);
  if (schema.typeName.startsWith("google.protobuf.") || visiting.has(schema.typeName)) return false;
  visiting.add(schema.typeName);
  const reaches = schema.fields.some((field) => field.message && mayHoldMarks(field.message, visiting));
  visiting.delete(schema.typeName);
  return visiting.size === 0 ? remember(schema, reaches) : reaches;
}

function remember(schema: DescMessage, reaches: boolean): boolean {
  reachCache.set(schema.typeName, reaches);
  return reaches;
}
