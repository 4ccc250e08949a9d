import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import type { GeneratedFile, Printable } from "@bufbuild/protoplugin";
import { holdsJsonObject, singularPresence } from "./field-shape.js";
import { unsupported, type WriterNames } from "./names.js";
import { fieldsByNumber } from "./reachable.js";
import type { Runtime } from "./runtime-imports.js";

/**
 * Prints `<message>FromJson(json)`, exported: what `fromJson(schema, json)` returns, read by the generated
 * reader when the JSON is in canonical form and by `fromJson` otherwise.
 */
export function printFromJson(f: GeneratedFile, message: DescMessage, runtime: Runtime, names: WriterNames) {
  f.print(f.jsDoc(`\`fromJson(${message.name}Schema, json)\`, read without reflection when it can be.`));
  const shape = f.importShape(message);
  f.print`${f.export("function", names.fromJson(message))}(json: ${runtime.JsonValue}): ${shape} {`;
  f.print`  return ${names.reader(message)}(json, 1) ?? ${runtime.fromJson}(${f.importSchema(message)}, json);`;
  f.print("}");
  f.print();
}

/**
 * Prints the exported check of stored JSON: `isCanonical<Message>List(json)` for a list of the message
 * (`list`), `isCanonical<Message>Json(json)` for one. Either says whether `JSON.stringify(json)` is exactly
 * what the JSON writers write of what `fromJson` reads it as, so that the text may be written as it is
 * (issue 13; storedListJson, storedMessageJson). It checks the value where it stands rather than reading
 * it and writing it again, which costs an entry's write a fraction of that (the ingest bench), and takes
 * what the engine made as well as what JSON.parse made: it refuses anything JSON.stringify would write
 * otherwise than it reads (isDataObject, isDataArray, holes, an inherited toJSON). Its one premise:
 * members are data, not accessors or proxies.
 */
export function printIsCanonicalStored(
  f: GeneratedFile,
  message: DescMessage,
  runtime: Runtime,
  names: WriterNames,
  { list }: { list: boolean },
) {
  const what = list ? `the list of ${message.typeName}` : `the ${message.typeName}`;
  f.print(
    f.jsDoc(
      `Whether \`JSON.stringify(json)\` is the JSON text the writers write of ${what} it reads as. ` +
        "Members must be data, not accessors or proxies.",
    ),
  );
  const name = `isCanonical${message.name}${list ? "List" : "Json"}`;
  const check: Printable = list
    ? [
        runtime.isDataArray,
        "(json) && ",
        runtime.everyItem,
        `(json, (item) => ${names.canonical(message)}(item, 1))`,
      ]
    : `${names.canonical(message)}(json, 1)`;
  f.print`${f.export("function", name)}(json: unknown): boolean {`;
  f.print(["  return ", runtime.noInheritedToJson, "() && ", check, ";"]);
  f.print("}");
  f.print();
}

/**
 * Prints `isCanonical<Message>(json, depth)`: whether the reader reads `json` and the JSON writer writes what
 * JSON.stringify writes of it. The writer writes members in field-number order, every one with implicit
 * presence and every list, so the keys must come in that order, none missing that the writer always
 * writes (`next`: the index in that order after the last key met), and no other key; each value must be
 * one the reader keeps and the writer writes as JSON.stringify does: a well-formed string, a finite
 * number, a google.protobuf.Value as plain JSON (StoredValue), a message checked the same way, a map of
 * them under well-formed keys other than `__proto__` (which the writers never write, jsonObjectOf).
 */
export function printIsCanonical(
  f: GeneratedFile,
  message: DescMessage,
  runtime: Runtime,
  names: WriterNames,
) {
  const fields = fieldsByNumber(message);
  f.print(
    f.jsDoc(
      `Whether JSON.stringify writes \`json\` as the writers write the ${message.typeName} it reads as.`,
    ),
  );
  f.print`function ${names.canonical(message)}(json: unknown, depth: number): boolean {`;
  f.print`  if (!${runtime.isDataObject}(json) || depth > ${runtime.maxDepth}) return false;`;
  f.print("  let next = 0;");
  f.print("  for (const key of Object.keys(json)) {");
  f.print("    const value = json[key];");
  f.print("    switch (key) {");
  let earliest = 0;
  fields.forEach((field, at) => {
    const order = earliest === at ? `next !== ${at}` : `next < ${earliest} || next > ${at}`;
    f.print`      case ${JSON.stringify(field.jsonName)}: if (${order} || !${canonicalValue(field, runtime, names)}) return false; next = ${at + 1}; break;`;
    if (alwaysWritten(field)) earliest = at + 1;
  });
  f.print("      default: return false;");
  f.print("    }");
  f.print("  }");
  f.print(`  return next >= ${earliest};`);
  f.print("}");
  f.print();
}

/** Whether the JSON writer writes the member whatever it holds: an implicit scalar or a list (D30 leaves out none of a read message). */
function alwaysWritten(field: DescField): boolean {
  return field.fieldKind === "list" || field.fieldKind === "map" || singularPresence(field) === "implicit";
}

/** The check of `value` in the field: true when the reader keeps it and the writer writes it as JSON.stringify does. */
function canonicalValue(field: DescField, runtime: Runtime, names: WriterNames): Printable {
  switch (field.fieldKind) {
    case "scalar":
      return [scalarCheck(field, field.scalar, runtime), "(value)"];
    case "message":
      return canonicalMessage(field, field.message, "value", runtime, names);
    case "list":
      if (field.listKind !== "message") throw unsupported(field, "a list of scalars or enums, in a reader");
      return [
        "(",
        runtime.isDataArray,
        "(value) && ",
        runtime.everyItem,
        "(value, (item) => ",
        canonicalMessage(field, field.message, "item", runtime, names),
        "))",
      ];
    case "map":
      if (field.mapKey !== ScalarType.STRING)
        throw unsupported(field, "a map with keys other than strings, in a check");
      if (field.mapKind !== "message") throw unsupported(field, "a map of scalars or enums, in a check");
      return [
        "(",
        runtime.isDataObject,
        "(value) && ",
        runtime.everyMember,
        "(value, (item) => ",
        canonicalMessage(field, field.message, "item", runtime, names),
        "))",
      ];
    default:
      throw unsupported(field, `a ${field.fieldKind} field, in a reader`);
  }
}

/** The check of a message a field holds (heldMessage's call with the canonical checks). */
function canonicalMessage(
  field: DescField,
  message: DescMessage,
  value: string,
  runtime: Runtime,
  names: WriterNames,
): Printable {
  return heldMessage(field, message, value, runtime.isPlainJson, names.canonical);
}

/**
 * Prints `read<Message>(json, depth)`: the message `fromJson` builds from canonical protobuf JSON (JSON names,
 * each value of its field's own JSON type), or undefined for anything else. It starts from the zero message
 * `create` makes (implicit fields at their zero value, explicit ones absent) and sets each key's field.
 */
export function printJsonReader(
  f: GeneratedFile,
  message: DescMessage,
  runtime: Runtime,
  names: WriterNames,
) {
  const shape = f.importShape(message);
  f.print(
    f.jsDoc(`${message.typeName} from canonical protobuf JSON at \`fromJson\`'s depth, else undefined.`),
  );
  f.print`function ${names.reader(message)}(json: ${runtime.JsonValue} | undefined, depth: number): ${shape} | undefined {`;
  f.print`  if (!${runtime.isJsonObject}(json) || depth > ${runtime.maxDepth}) return undefined;`;
  f.print`  const m: ${shape} = { ${zeroMessage(message)} };`;
  f.print("  for (const key of Object.keys(json)) {");
  f.print("    const value = json[key];");
  f.print("    switch (key) {");
  for (const field of message.fields) {
    f.print`      case ${JSON.stringify(field.jsonName)}: ${readStatement(field, runtime, names)} break;`;
  }
  f.print("      default: return undefined;");
  f.print("    }");
  f.print("  }");
  f.print("  return m;");
  f.print("}");
  f.print();
}

function zeroMessage(message: DescMessage): string {
  const members = [`$typeName: "${message.typeName}"`];
  for (const field of message.fields) {
    const zero = zeroValue(field);
    if (zero !== undefined) members.push(`${field.localName}: ${zero}`);
  }
  return members.join(", ");
}

/** A field's value in a zero message; undefined for a field with explicit presence, which is absent. */
function zeroValue(field: DescField): string | undefined {
  if (field.oneof) throw unsupported(field, "a oneof member, in a reader");
  switch (field.fieldKind) {
    case "list":
      return "[]";
    case "message":
      return undefined;
    case "scalar":
      if (singularPresence(field) === "explicit") return undefined;
      return field.scalar === ScalarType.STRING ? '""' : "0";
    default:
      throw unsupported(field, `a ${field.fieldKind} field, in a reader`);
  }
}

/** Reads `value` into the field, or returns undefined from the reader when it is not canonical. */
function readStatement(field: DescField, runtime: Runtime, names: WriterNames): Printable {
  const target = `m.${field.localName}`;
  switch (field.fieldKind) {
    case "scalar":
      return [
        "if (!",
        scalarCheck(field, field.scalar, runtime),
        "(value)) return undefined; ",
        target,
        " = value;",
      ];
    case "message":
      return [
        "{ const read = ",
        messageRead(field, field.message, "value", runtime, names),
        "; if (read === undefined) return undefined; ",
        target,
        " = read; }",
      ];
    case "list":
      if (field.listKind !== "message") throw unsupported(field, "a list of scalars or enums, in a reader");
      return [
        "{ if (!Array.isArray(value)) return undefined; for (const item of value) { const read = ",
        messageRead(field, field.message, "item", runtime, names),
        "; if (read === undefined) return undefined; ",
        target,
        ".push(read); } }",
      ];
    default:
      throw unsupported(field, `a ${field.fieldKind} field, in a reader`);
  }
}

/** The read of a message a field holds (heldMessage's call with the readers). */
function messageRead(
  field: DescField,
  message: DescMessage,
  value: string,
  runtime: Runtime,
  names: WriterNames,
): Printable {
  return heldMessage(field, message, value, runtime.readValue, names.reader);
}

/**
 * A call on a message a field holds, one level deeper; google.protobuf.Value two (its message, then its
 * JSON form), with `forValue`; any other message with its own generated function, `forMessage`.
 */
function heldMessage(
  field: DescField,
  message: DescMessage,
  value: string,
  forValue: Printable,
  forMessage: (message: DescMessage) => string,
): Printable {
  if (holdsJsonObject(field)) throw unsupported(field, "google.protobuf.Struct, in a reader");
  if (message.typeName === "google.protobuf.Value") return [forValue, `(${value}, depth + 2)`];
  if (message.typeName.startsWith("google.protobuf."))
    throw unsupported(field, `${message.typeName}, in a reader`);
  return [forMessage(message), `(${value}, depth + 1)`];
}

function scalarCheck(field: DescField, scalar: ScalarType, runtime: Runtime): Printable {
  switch (scalar) {
    case ScalarType.STRING:
      return runtime.isWellFormedString;
    case ScalarType.UINT32:
      return runtime.isUint32;
    case ScalarType.DOUBLE:
      return runtime.isFiniteNumber;
    default:
      throw unsupported(field, `scalar type ${ScalarType[scalar]}, in a reader`);
  }
}
