import type { ListValue, Struct, Value } from "@bufbuild/protobuf/wkt";
import { StoredValue } from "./json-reading.js";

/*
 * The pieces of JSON text that the serialisers protoc-gen-serializers generates into gen/ are made of. Each
 * writes what `JSON.stringify` writes of the value protobuf-es's `toJson` gives, so the generated text equals
 * `JSON.stringify(toJson(...))` without the object in between.
 */

export const jsonString: (value: string) => string = JSON.stringify;

/** An integer field: toJson gives the number, and JSON.stringify writes a non-finite one as null. */
export function jsonNumber(value: number): string {
  return Number.isFinite(value) ? `${value}` : "null";
}

/** A float or double field: the protobuf JSON mapping writes the non-finite ones as strings. */
export function jsonDouble(value: number): string {
  if (Number.isFinite(value)) return `${value}`;
  if (Number.isNaN(value)) return '"NaN"';
  return value > 0 ? '"Infinity"' : '"-Infinity"';
}

/** The separator before a member of the object or array `json` has opened: none before the first. */
export function comma(json: string): string {
  return json.length > 1 ? "," : "";
}

export function jsonArrayOf<T>(items: readonly T[], write: (item: T) => string): string {
  let json = "[";
  for (const item of items) json += `${comma(json)}${write(item)}`;
  return `${json}]`;
}

/**
 * A map field or Struct. toJson assigns each entry to a plain object, where the key `__proto__` sets the
 * prototype instead of adding a member, so JSON.stringify never writes it; neither does this, though its
 * value is still written first, to refuse what toJson refuses.
 */
export function jsonObjectOf<T>(entries: { readonly [key: string]: T }, write: (value: T) => string): string {
  let json = "{";
  for (const key of Object.keys(entries)) {
    const value = write(entries[key] as T);
    if (key !== "__proto__") json += `${comma(json)}${jsonString(key)}:${value}`;
  }
  return `${json}}`;
}

/** google.protobuf.Value is written as the JSON value it holds (the mapping's special form). */
export function valueJson(value: Value): string {
  if (value instanceof StoredValue) {
    const text = value.storedText();
    if (text !== undefined) return text;
    const json = value.storedJson();
    if (json !== undefined) return JSON.stringify(json);
  }
  const { kind } = value;
  switch (kind.case) {
    case "nullValue":
      return "null";
    case "numberValue":
      if (!Number.isFinite(kind.value)) throw new Error(`${value.$typeName} cannot be NaN or Infinity`);
      return `${kind.value}`;
    case "stringValue":
      return jsonString(kind.value);
    case "boolValue":
      return `${kind.value}`;
    case "structValue":
      return structJson(kind.value);
    case "listValue":
      return listValueJson(kind.value);
    default:
      throw new Error(`${value.$typeName} must have a value`);
  }
}

export function structJson(struct: Struct): string {
  return jsonObjectOf(struct.fields, valueJson);
}

export function listValueJson(list: ListValue): string {
  return jsonArrayOf(list.values, valueJson);
}
