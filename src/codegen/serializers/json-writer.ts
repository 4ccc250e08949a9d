import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import type { GeneratedFile, Printable } from "@bufbuild/protoplugin";
import { holdsJsonObject, singularPresence } from "./field-shape.js";
import { unsupported, type WriterNames } from "./names.js";
import { fieldsByNumber } from "./reachable.js";
import type { Runtime } from "./runtime-imports.js";

/** google.protobuf types the JSON mapping writes in a form of their own; runtime/json-text.ts has them. */
const wellKnownJson = new Map<string, keyof Runtime>([
  ["google.protobuf.Value", "valueJson"],
  ["google.protobuf.Struct", "structJson"],
  ["google.protobuf.ListValue", "listValueJson"],
]);

export function hasJsonForm(message: DescMessage): boolean {
  return wellKnownJson.has(message.typeName);
}

/**
 * Prints `<message>Json(m)`: the text of `JSON.stringify(toJson(schema, m, { alwaysEmitImplicit: true }))`,
 * less the lists and maps a view marked with `leaveOut` (D30). Members come in field-number order, as
 * toJson adds them; a member that may be absent is preceded by a comma only when one came before it.
 * `exported`, it is exported, for code that writes the message alone; `stored`, a message that carries its
 * stored text (storedMessageJson) is written as that text.
 */
export function printJsonWriter(
  f: GeneratedFile,
  message: DescMessage,
  runtime: Runtime,
  names: WriterNames,
  storedList: (field: DescField) => boolean,
  { exported, stored }: { exported: boolean; stored: boolean },
) {
  const fields = fieldsByNumber(message);
  f.print(f.jsDoc(`The JSON text of ${message.typeName}.`));
  const name = exported ? f.export("function", names.json(message)) : `function ${names.json(message)}`;
  f.print`${name}(m: ${f.importShape(message)}): string {`;
  if (stored)
    f.print`  { const text = ${runtime.storedMessageJson}(m); if (text !== undefined) return text; }`;
  if (fields.some(isListOrMap)) f.print`  const leftOut = ${runtime.leftOutOf}(m);`;
  f.print('  let json = "{";');
  let written: "nothing" | "something" | "maybe" = "nothing";
  for (const field of fields) {
    const condition = memberCondition(field);
    const separator: Printable =
      written === "something"
        ? ","
        : written === "nothing" && !condition
          ? ""
          : ["${", runtime.comma, "(json)}"];
    const member = [
      "json += `",
      separator,
      `"${jsonName(field)}":\${`,
      storedList(field)
        ? [runtime.storedListJson, `(m, "${field.localName}") ?? `, memberValue(field, runtime, names)]
        : memberValue(field, runtime, names),
      "}`;",
    ];
    f.print(condition ? ["  if (", condition, ") ", member] : ["  ", member]);
    if (!condition) written = "something";
    else if (written === "nothing") written = "maybe";
  }
  f.print('  return json + "}";');
  f.print("}");
  f.print();
}

/** When the member is written; undefined when always (alwaysEmitImplicit writes implicit zero values). */
function memberCondition(field: DescField): string | undefined {
  if (field.oneof) throw unsupported(field, "a oneof member");
  if (isListOrMap(field)) return `!leftOut?.has("${field.localName}")`;
  return singularPresence(field) === "explicit" ? `m.${field.localName} !== undefined` : undefined;
}

function memberValue(field: DescField, runtime: Runtime, names: WriterNames): Printable {
  const value = `m.${field.localName}`;
  switch (field.fieldKind) {
    case "scalar":
      return [scalarWriter(field, field.scalar, runtime), "(", value, ")"];
    case "message":
      if (holdsJsonObject(field)) return [runtime.structJson, "(", runtime.structOfJson, "(", value, "))"];
      return [messageWriter(field, field.message, runtime, names), "(", value, ")"];
    case "list": {
      if (field.listKind === "enum") throw unsupported(field, "a list of enums");
      const item =
        field.listKind === "scalar"
          ? scalarWriter(field, field.scalar, runtime)
          : messageWriter(field, field.message, runtime, names);
      return [runtime.jsonArrayOf, "(", value, ", ", item, ")"];
    }
    case "map":
      if (field.mapKey !== ScalarType.STRING) throw unsupported(field, "a map with keys other than strings");
      if (field.mapKind !== "message") throw unsupported(field, "a map of scalars or enums");
      return [
        runtime.jsonObjectOf,
        "(",
        value,
        ", ",
        messageWriter(field, field.message, runtime, names),
        ")",
      ];
    case "enum":
      throw unsupported(field, "an enum");
  }
}

function scalarWriter(field: DescField, scalar: ScalarType, runtime: Runtime): Printable {
  switch (scalar) {
    case ScalarType.STRING:
      return runtime.jsonString;
    case ScalarType.UINT32:
      return runtime.jsonNumber;
    case ScalarType.DOUBLE:
      return runtime.jsonDouble;
    case ScalarType.BOOL:
      return "String";
    default:
      throw unsupported(field, `scalar type ${ScalarType[scalar]}`);
  }
}

/** The writer of the messages a field holds; a singular Struct field is written by the caller. */
function messageWriter(
  field: DescField,
  message: DescMessage,
  runtime: Runtime,
  names: WriterNames,
): Printable {
  if (holdsJsonObject(field)) throw unsupported(field, "a list or map of google.protobuf.Struct");
  const wellKnown = wellKnownJson.get(message.typeName);
  if (wellKnown) return runtime[wellKnown];
  if (message.typeName.startsWith("google.protobuf.")) throw unsupported(field, message.typeName);
  return names.json(message);
}

function isListOrMap(field: DescField): boolean {
  return field.fieldKind === "list" || field.fieldKind === "map";
}

/** The member name, checked to need no escaping in JSON or in the template literal it is printed into. */
function jsonName(field: DescField): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field.jsonName))
    throw unsupported(field, `JSON name "${field.jsonName}"`);
  return field.jsonName;
}
