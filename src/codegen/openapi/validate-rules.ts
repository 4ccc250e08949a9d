import type { DescField } from "@bufbuild/protobuf";
import { getOption, hasOption, ScalarType } from "@bufbuild/protobuf";
import {
  type FieldRules,
  field as fieldRules,
  Ignore,
  type RepeatedRules,
  type StringRules,
} from "../../../gen/buf/validate/validate_pb.js";

/** JSON Schema keywords, which json-schema.ts lays into a field's schema. */
type SchemaKeywords = { [keyword: string]: unknown };

/**
 * The JSON Schema keywords of a field's `buf.validate` rules (issue 14), so the document states what the
 * validation interceptor enforces: `in` as `enum`, lengths, patterns, ranges, e-mail and URI formats, list
 * sizes. CEL expressions have no JSON Schema form; the field's comment describes them. Returned separately
 * for the field itself and for each element of a list.
 */
export function declaredRules(
  field: DescField,
  requiredInput: boolean,
): { own: SchemaKeywords; items: SchemaKeywords } {
  // A REQUIRED string without presence is missing when empty (the validation interceptor's rule).
  const nonEmpty = requiredInput && field.fieldKind === "scalar" && field.scalar === ScalarType.STRING;
  if (!hasOption(field, fieldRules)) return { own: nonEmpty ? { minLength: 1 } : {}, items: {} };
  const rules = getOption(field, fieldRules);
  if (field.fieldKind === "list" && rules.type.case === "repeated") {
    const repeated: RepeatedRules = rules.type.value;
    return {
      own: {
        ...(repeated.minItems > 0n && { minItems: Number(repeated.minItems) }),
        ...(repeated.maxItems > 0n && { maxItems: Number(repeated.maxItems) }),
      },
      items: repeated.items ? valueRules(repeated.items, true) : {},
    };
  }
  // A value the rules ignore when it is the zero value ("" for a string) is valid as that too, unless a
  // REQUIRED field behavior refuses it anyway.
  const zeroAllowed = rules.ignore === Ignore.IF_ZERO_VALUE && !requiredInput;
  return { own: { ...(nonEmpty && { minLength: 1 }), ...valueRules(rules, !zeroAllowed) }, items: {} };
}

function valueRules(rules: FieldRules, zeroRefused: boolean): SchemaKeywords {
  const { type } = rules;
  let schema: SchemaKeywords;
  switch (type.case) {
    case "string":
      schema = stringRules(type.value, rules.required);
      break;
    case "int32":
    case "int64":
    case "uint32":
    case "uint64":
    case "sint32":
    case "sint64":
    case "double":
    case "float":
      schema = numberRules(type.value);
      break;
    default:
      schema = {};
  }
  if (zeroRefused || Object.keys(schema).length === 0) return schema;
  if (Array.isArray(schema.enum)) return { ...schema, enum: ["", ...schema.enum] };
  return { anyOf: [{ const: "" }, schema] };
}

function stringRules(rules: StringRules, required: boolean): SchemaKeywords {
  const format =
    rules.wellKnown.case === "email" ? "email" : rules.wellKnown.case === "uri" ? "uri" : undefined;
  const minLength = rules.minLen > 0n ? Number(rules.minLen) : required ? 1 : undefined;
  return {
    ...(rules.in.length > 0 && { enum: [...rules.in] }),
    ...(minLength !== undefined && { minLength }),
    ...(rules.maxLen > 0n && { maxLength: Number(rules.maxLen) }),
    ...(rules.pattern !== "" && { pattern: rules.pattern }),
    ...(format && { format }),
    ...(rules.example.length > 0 && { examples: [...rules.example] }),
  };
}

interface NumberRules {
  lessThan: { case: "lt" | "lte"; value: number | bigint } | { case: undefined };
  greaterThan: { case: "gt" | "gte"; value: number | bigint } | { case: undefined };
}

function numberRules(rules: NumberRules): SchemaKeywords {
  const { lessThan, greaterThan } = rules;
  return {
    ...(greaterThan.case === "gte" && { minimum: Number(greaterThan.value) }),
    ...(greaterThan.case === "gt" && { exclusiveMinimum: Number(greaterThan.value) }),
    ...(lessThan.case === "lte" && { maximum: Number(lessThan.value) }),
    ...(lessThan.case === "lt" && { exclusiveMaximum: Number(lessThan.value) }),
  };
}
