import type { GeneratedFile } from "@bufbuild/protoplugin";

/**
 * The hand-written modules the generated serialisers call, all in runtime/ beside this generator: gen/
 * imports those and packages, nothing else of src/ (.dependency-cruiser.cjs). Import paths are relative to
 * the plugin's out directory, gen/ (buf.gen.yaml).
 */
export function runtimeImports(f: GeneratedFile) {
  const from = (module: string) => (name: string) =>
    f.import(name, `../src/codegen/serializers/runtime/${module}.js`);
  const json = from("json-text");
  const wire = from("wire-writer");
  const reading = from("json-reading");
  return {
    Message: f.import("Message", "@bufbuild/protobuf", true),
    JsonValue: f.import("JsonValue", "@bufbuild/protobuf", true),
    JsonObject: f.import("JsonObject", "@bufbuild/protobuf", true),
    fromJson: f.import("fromJson", "@bufbuild/protobuf"),
    leftOutOf: from("presence")("leftOutOf"),
    comma: json("comma"),
    jsonString: json("jsonString"),
    jsonNumber: json("jsonNumber"),
    jsonDouble: json("jsonDouble"),
    jsonArrayOf: json("jsonArrayOf"),
    jsonObjectOf: json("jsonObjectOf"),
    valueJson: json("valueJson"),
    structJson: json("structJson"),
    listValueJson: json("listValueJson"),
    structOfJson: from("struct-field")("structOfJson"),
    WireWriter: wire("WireWriter"),
    WireType: wire("WireType"),
    wireBytes: wire("wireBytes"),
    maxDepth: reading("maxDepth"),
    isJsonObject: reading("isJsonObject"),
    isWellFormedString: reading("isWellFormedString"),
    isUint32: reading("isUint32"),
    isFiniteNumber: reading("isFiniteNumber"),
    readValue: reading("readValue"),
    isPlainJson: reading("isPlainJson"),
    isDataObject: reading("isDataObject"),
    isDataArray: reading("isDataArray"),
    everyItem: reading("everyItem"),
    noInheritedToJson: reading("noInheritedToJson"),
    StoredValue: reading("StoredValue"),
    storedListJson: reading("storedListJson"),
    storedMessageJson: reading("storedMessageJson"),
    everyMember: reading("everyMember"),
  };
}

export type Runtime = ReturnType<typeof runtimeImports>;
