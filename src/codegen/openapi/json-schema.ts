import type { AnyDesc, DescEnum, DescExtension, DescField, DescFile, DescMessage } from "@bufbuild/protobuf";
import { getOption, hasOption, ScalarType } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { getComments } from "@bufbuild/protoplugin";
import { declaredRules } from "./validate-rules.js";

export type JsonSchema = { [key: string]: unknown };

/**
 * The server writes messages with implicit fields always present and reads them with every field
 * optional, so a message reached from both sides needs two schemas.
 */
export type Direction = "input" | "output";

/** google.api.FieldBehavior.OPTIONAL, REQUIRED and INPUT_ONLY */
const FIELD_BEHAVIOR_OPTIONAL = 1;
const FIELD_BEHAVIOR_REQUIRED = 2;
const FIELD_BEHAVIOR_INPUT_ONLY = 4;

/**
 * The JSON Schemas of the proto3 JSON mapping that protobuf-es `toJson(..., {alwaysEmitImplicit: true})`
 * writes and `fromJson` reads. Components are named by full proto type name; a message the server
 * both reads and writes gets its read form under `<type name>-Input` (a `-` never occurs in proto names).
 */
export class SchemaCatalog {
  private readonly messages: Record<Direction, Map<string, DescMessage>> = {
    input: new Map(),
    output: new Map(),
  };
  private readonly enums = new Map<string, DescEnum>();

  /** `field_behavior` is looked up in the request's files, so protos opt in by importing it. */
  constructor(private readonly fieldBehavior: DescExtension | undefined) {}

  /** Records a message and everything it contains; call for every root before asking for refs. */
  reach(message: DescMessage, direction: Direction): void {
    if (wellKnownSchema(message) !== undefined) {
      this.messages.output.set(message.typeName, message);
      return;
    }
    if (this.messages[direction].has(message.typeName)) return;
    this.messages[direction].set(message.typeName, message);
    this.reachFields(message.fields, direction);
  }

  /** Records what `fields` contain, for a schema built inline rather than as a component. */
  reachFields(fields: readonly DescField[], direction: Direction): void {
    for (const field of fields) {
      if (field.enum) this.enums.set(field.enum.typeName, field.enum);
      if (field.message) this.reach(field.message, direction);
    }
  }

  messageRef(message: DescMessage, direction: Direction): JsonSchema {
    return { $ref: `#/components/schemas/${this.messageName(message, direction)}` };
  }

  /** The schema of a value of `field`, with the field's comment as description. */
  fieldSchema(field: DescField, direction: Direction): JsonSchema {
    return withDescription(this.valueSchema(field, direction), field);
  }

  /** Whether the server rejects a request that leaves `field` out. */
  isRequiredInput(field: DescField): boolean {
    return this.behaviorsOf(field).includes(FIELD_BEHAVIOR_REQUIRED);
  }

  /**
   * With `alwaysEmitImplicit`, every field without explicit presence is in the JSON, even when empty,
   * except a list or map marked OPTIONAL (the server leaves it out when not asked for, D30) or INPUT_ONLY
   * (never returned, such as a webhook's headers, D38).
   */
  private alwaysWritten(field: DescField): boolean {
    const behaviors = this.behaviorsOf(field);
    if (behaviors.includes(FIELD_BEHAVIOR_INPUT_ONLY)) return false;
    if (field.fieldKind === "list" || field.fieldKind === "map")
      return !behaviors.includes(FIELD_BEHAVIOR_OPTIONAL);
    return field.presence === FeatureSet_FieldPresence.IMPLICIT;
  }

  private behaviorsOf(field: DescField): number[] {
    if (this.fieldBehavior === undefined || !hasOption(field, this.fieldBehavior)) return [];
    return getOption(field, this.fieldBehavior) as unknown as number[];
  }

  /** The message as an object schema, leaving out `omit` (fields a request takes from the path). */
  objectSchema(
    message: DescMessage,
    direction: Direction,
    omit: ReadonlySet<DescField> = new Set(),
  ): JsonSchema {
    const fields = message.fields.filter((field) => !omit.has(field));
    const required = fields
      .filter((field) => (direction === "output" ? this.alwaysWritten(field) : this.isRequiredInput(field)))
      .map((field) => field.jsonName);
    const properties = Object.fromEntries(fields.map((f) => [f.jsonName, this.fieldSchema(f, direction)]));
    return withDescription(
      { type: "object", properties, ...(required.length > 0 ? { required } : {}) },
      message,
    );
  }

  components(): Record<string, JsonSchema> {
    const entries: [string, JsonSchema][] = [];
    for (const direction of ["input", "output"] as const) {
      for (const message of this.messages[direction].values()) {
        const schema = wellKnownSchema(message) ?? this.objectSchema(message, direction);
        entries.push([this.messageName(message, direction), schema]);
      }
    }
    for (const desc of this.enums.values()) entries.push([desc.typeName, enumSchema(desc)]);
    return sortKeys(Object.fromEntries(entries));
  }

  private messageName(message: DescMessage, direction: Direction): string {
    const both = direction === "input" && this.messages.output.has(message.typeName);
    return both && wellKnownSchema(message) === undefined ? `${message.typeName}-Input` : message.typeName;
  }

  /** The schema of a value of `field`, without description; a request's also states its buf.validate rules. */
  valueSchema(field: DescField, direction: Direction): JsonSchema {
    const rules = direction === "input" ? declaredRules(field, this.isRequiredInput(field)) : noRules;
    switch (field.fieldKind) {
      case "scalar":
        return { ...textInput(scalarSchema(field.scalar, field.name), direction), ...rules.own };
      case "enum":
        return enumRef(field.enum);
      case "message":
        return this.messageRef(field.message, direction);
      case "list":
        return {
          type: "array",
          items: { ...this.elementSchema(field, direction), ...rules.items },
          ...rules.own,
        };
      case "map":
        return {
          type: "object",
          ...(Object.keys(rules.keys).length > 0 && { propertyNames: rules.keys }),
          additionalProperties: { ...this.elementSchema(field, direction), ...rules.items },
          ...rules.own,
        };
    }
  }

  private elementSchema(field: DescField & { fieldKind: "list" | "map" }, direction: Direction): JsonSchema {
    if (field.message) return this.messageRef(field.message, direction);
    if (field.enum) return enumRef(field.enum);
    return textInput(scalarSchema(field.scalar as ScalarType, field.name), direction);
  }
}

/**
 * A request's plain text holds no U+0000: the validation interceptor refuses it for both stores (D32),
 * so the document says so. A field's own buf.validate pattern, spread after, takes its place.
 */
function textInput(schema: JsonSchema, direction: Direction): JsonSchema {
  const plainText =
    schema.type === "string" && schema.format === undefined && schema.contentEncoding === undefined;
  return direction === "input" && plainText ? { ...schema, pattern: "^[^\\u0000]*$" } : schema;
}

const noRules = { own: {}, items: {}, keys: {} };

function scalarSchema(scalar: ScalarType, fieldName: string): JsonSchema {
  switch (scalar) {
    case ScalarType.DOUBLE:
      return { type: "number", format: "double" };
    case ScalarType.FLOAT:
      return { type: "number", format: "float" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", format: "int64", minimum: 0, maximum: 4294967295 };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return { type: "string", format: "int64", pattern: "^-?[0-9]+$" };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: "string", format: "uint64", pattern: "^[0-9]+$" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.STRING:
      // D7: every *At field holds Date.prototype.toISOString().
      return fieldName.endsWith("_at") ? { type: "string", format: "date-time" } : { type: "string" };
  }
}

function enumRef(desc: DescEnum): JsonSchema {
  return { $ref: `#/components/schemas/${desc.typeName}` };
}

function enumSchema(desc: DescEnum): JsonSchema {
  if (desc.typeName === "google.protobuf.NullValue") return { type: "null" };
  return withDescription({ type: "string", enum: desc.values.map((value) => value.name) }, desc);
}

/** The well-known types whose proto3 JSON form is not an object of their fields. */
function wellKnownSchema(message: DescMessage): JsonSchema | undefined {
  switch (message.typeName) {
    case "google.protobuf.Value":
      // D48: no `type` at all, JSON Schema's "anything"; a six-member type array says the same, but
      // openapi-python-client gives up on it, dropping every schema and endpoint that reaches a Value.
      return { description: "Any JSON value, null included." };
    case "google.protobuf.Struct":
      // D48: stated, as generators read a bare object as one with no keys (TypeScript's Record<string, never>).
      return { type: "object", additionalProperties: true };
    case "google.protobuf.ListValue":
      return { type: "array" };
    case "google.protobuf.Timestamp":
      return { type: "string", format: "date-time" };
    case "google.protobuf.Duration":
      return { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$" };
    case "google.protobuf.FieldMask":
      return { type: "string" };
    case "google.protobuf.Empty":
      return { type: "object" };
    case "google.protobuf.Any":
      // The packed message's fields sit beside @type.
      return {
        type: "object",
        required: ["@type"],
        properties: { "@type": { type: "string" } },
        additionalProperties: true,
      };
  }
  const wrapped = message.file.name === "google/protobuf/wrappers" ? message.fields[0] : undefined;
  return wrapped?.fieldKind === "scalar" ? scalarSchema(wrapped.scalar, wrapped.name) : undefined;
}

/** Keys in UTF-16 order, which no locale setting changes. */
export function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, record[key] as T]),
  );
}

function withDescription(schema: JsonSchema, desc: Exclude<AnyDesc, DescFile>): JsonSchema {
  const description = commentOf(desc);
  return description === undefined ? schema : { description, ...schema };
}

/** The leading comment of a proto element, without the comment markers' indentation. */
export function commentOf(desc: Exclude<AnyDesc, DescFile>): string | undefined {
  const leading = getComments(desc).leading;
  if (leading === undefined) return undefined;
  const text = leading
    .split("\n")
    .map((line) => line.replace(/^ /, "").trimEnd())
    .join("\n")
    .trim();
  return text === "" ? undefined : text;
}
