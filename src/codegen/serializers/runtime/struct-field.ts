import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { NullValue, type Struct, type Value } from "@bufbuild/protobuf/wkt";

/**
 * protobuf-es gives a google.protobuf.Struct field (outside Value) the shape of a plain JsonObject and turns
 * it into a Struct message before writing it. This is that conversion, step for step, so the generated
 * serialisers (protoc-gen-serializers) write the same text and bytes; it is only on the execution answer's
 * block configs, not on a hot path.
 */
export function structOfJson(json: JsonObject): Struct {
  const fields: Record<string, Value> = {};
  // As in protobuf-es, a "__proto__" key sets the prototype of `fields` and so is not one of its entries.
  for (const [key, value] of Object.entries(json)) fields[key] = valueOfJson(value);
  return { $typeName: "google.protobuf.Struct", fields };
}

function valueOfJson(json: JsonValue): Value {
  return { $typeName: "google.protobuf.Value", kind: kindOf(json) };
}

function kindOf(json: JsonValue): Value["kind"] {
  switch (typeof json) {
    case "number":
      return { case: "numberValue", value: json };
    case "string":
      return { case: "stringValue", value: json };
    case "boolean":
      return { case: "boolValue", value: json };
    case "object":
      if (json === null) return { case: "nullValue", value: NullValue.NULL_VALUE };
      if (Array.isArray(json)) {
        return {
          case: "listValue",
          value: { $typeName: "google.protobuf.ListValue", values: Array.from(json, valueOfJson) },
        };
      }
      return { case: "structValue", value: structOfJson(json) };
    default:
      return { case: undefined };
  }
}
