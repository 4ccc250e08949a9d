import type { DescField } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { unsupported } from "./names.js";

/**
 * How a singular field outside a oneof tells set from unset, as protobuf-es's `isFieldSet` does for proto3:
 * a message field or a proto3 `optional` scalar is unset when undefined; any other scalar when it holds its
 * zero value.
 */
export function singularPresence(field: DescField): "explicit" | "implicit" {
  if (field.fieldKind === "message" || field.proto.proto3Optional) return "explicit";
  // proto2 and editions keep explicit defaults on the prototype, which an undefined check would misread.
  if (field.presence !== FeatureSet_FieldPresence.IMPLICIT)
    throw unsupported(field, "explicit presence outside proto3");
  return "implicit";
}

/**
 * Whether protobuf-es shapes what the field holds as plain JsonObjects: google.protobuf.Struct anywhere but
 * inside google.protobuf.Value. Reflection turns each into a Struct before writing; so do the serialisers
 * (runtime/struct-field.ts), for a singular field so far.
 */
export function holdsJsonObject(field: DescField): boolean {
  return (
    field.message?.typeName === "google.protobuf.Struct" && field.parent.typeName !== "google.protobuf.Value"
  );
}
