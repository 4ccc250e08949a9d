import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import type { GeneratedFile, Printable } from "@bufbuild/protoplugin";
import { holdsJsonObject, singularPresence } from "./field-shape.js";
import { unsupported, type WriterNames } from "./names.js";
import { fieldsByNumber } from "./reachable.js";
import type { Runtime } from "./runtime-imports.js";

/** A scalar's wire type and the WireWriter method that writes it. */
interface ScalarWriting {
  wireType: "Varint" | "Bit64" | "LengthDelimited";
  method: "string" | "bool" | "double" | "uint32" | "int32";
}

/**
 * Prints `write<Message>(w, m)`: the bytes of `toBinary(schema, m)`, field by field in number order, each
 * written when protobuf-es counts it as set, then the unknown fields a decoder kept.
 */
export function printBinaryWriter(
  f: GeneratedFile,
  message: DescMessage,
  runtime: Runtime,
  names: WriterNames,
  storedList: (field: DescField) => boolean,
) {
  f.print(f.jsDoc(`The protobuf binary of ${message.typeName}.`));
  f.print`function ${names.binary(message)}(w: ${runtime.WireWriter}, m: ${f.importShape(message)}): void {`;
  if (message.typeName === "google.protobuf.Value") {
    // A Value kept as the stored JSON it was read from is written from that JSON (issue 13).
    f.print`  if (m instanceof ${runtime.StoredValue}) { const json = m.storedJson(); if (json !== undefined) { w.jsonValue(json); return; } }`;
  }
  for (const field of fieldsByNumber(message)) {
    const statement = fieldStatement(f, field, runtime, names);
    f.print("  ", storedList(field) ? storedListStatement(field, statement, runtime, names) : statement);
  }
  f.print("  if (m.$unknown !== undefined) w.unknown(m.$unknown);");
  f.print("}");
  f.print();
}

/**
 * A list the message may keep as its stored text (storedListJson): written from that text's JSON, proven
 * canonical when it was stored, rather than from the messages it would be read into (issue 13).
 */
function storedListStatement(
  field: DescField,
  statement: Printable,
  runtime: Runtime,
  names: WriterNames,
): Printable {
  if (field.fieldKind !== "list" || field.listKind !== "message") throw unsupported(field, "a stored list");
  return [
    `{ const stored = `,
    runtime.storedListJson,
    `(m, "${field.localName}"); if (stored !== undefined) { for (const item of JSON.parse(stored) as `,
    runtime.JsonObject,
    `[]) { const at = w.fork(${field.number}); ${names.binaryFromJson(field.message)}(w, item); w.join(at); } } else `,
    statement,
    " }",
  ];
}

/**
 * Prints \`write<Message>FromJson(w, json)\`: the bytes \`write<Message>\` writes of the message \`json\` reads
 * as, written from the JSON where it stands, for JSON \`isCanonical<Message>\` holds of: its members come in
 * field-number order, each of the type its field reads, so each is written as it comes, when set.
 */
export function printBinaryFromJson(
  f: GeneratedFile,
  message: DescMessage,
  runtime: Runtime,
  names: WriterNames,
) {
  f.print(
    f.jsDoc(
      `The protobuf binary of ${message.typeName} from its canonical JSON (${names.canonical(message)} holds).`,
    ),
  );
  f.print`function ${names.binaryFromJson(message)}(w: ${runtime.WireWriter}, json: ${runtime.JsonObject}): void {`;
  f.print("  for (const key of Object.keys(json)) {");
  f.print("    const value = json[key];");
  f.print("    switch (key) {");
  for (const field of fieldsByNumber(message)) {
    f.print`      case ${JSON.stringify(field.jsonName)}: ${fromJsonStatement(field, runtime, names)} break;`;
  }
  f.print("    }");
  f.print("  }");
  f.print("}");
  f.print();
}

/** One member of canonical JSON written as its field: as fieldStatement, reading the JSON value. */
function fromJsonStatement(field: DescField, runtime: Runtime, names: WriterNames): Printable {
  switch (field.fieldKind) {
    case "scalar": {
      const value = `value as ${field.scalar === ScalarType.STRING ? "string" : "number"}`;
      const write = scalarWrite(field, field.scalar, `${value}`, runtime);
      if (singularPresence(field) === "explicit") return ["{ ", write, " }"];
      return [`if (${implicitSet(field.scalar, "value")}) { `, write, " }"];
    }
    case "message":
      return ["{ ", messageFromJson(field.number, "value", field.message, runtime, names), " }"];
    case "list":
      if (field.listKind !== "message") throw unsupported(field, "a list of scalars or enums, from JSON");
      return [
        "for (const item of value as ",
        runtime.JsonValue,
        "[]) { ",
        messageFromJson(field.number, "item", field.message, runtime, names),
        " }",
      ];
    default:
      throw unsupported(field, `a ${field.fieldKind} field, from JSON`);
  }
}

/** A message a member holds, written from its JSON: google.protobuf.Value as the JSON it is. */
function messageFromJson(
  number: number,
  value: string,
  message: DescMessage,
  runtime: Runtime,
  names: WriterNames,
): Printable {
  const write: Printable =
    message.typeName === "google.protobuf.Value"
      ? [`w.jsonValue(${value} as `, runtime.JsonValue, ");"]
      : [`${names.binaryFromJson(message)}(w, ${value} as `, runtime.JsonObject, ");"];
  return [`const at = w.fork(${number}); `, write, " w.join(at);"];
}

/** One line per field: a table of what is written when. */
function fieldStatement(f: GeneratedFile, field: DescField, runtime: Runtime, names: WriterNames): Printable {
  const value = `m.${field.localName}`;
  switch (field.fieldKind) {
    case "list":
      if (field.listKind === "message") {
        if (holdsJsonObject(field)) throw unsupported(field, "a list of google.protobuf.Struct");
        return [
          `for (const item of ${value}) { `,
          messageWrite(field.number, "item", field.message, names),
          " }",
        ];
      }
      if (field.listKind === "enum" || field.packed)
        throw unsupported(field, "a list of enums or a packed list");
      return [`for (const item of ${value}) { `, scalarWrite(field, field.scalar, "item", runtime), " }"];
    case "map": {
      if (field.mapKey !== ScalarType.STRING) throw unsupported(field, "a map with keys other than strings");
      if (field.mapKind !== "message") throw unsupported(field, "a map of scalars or enums");
      if (holdsJsonObject(field)) throw unsupported(field, "a map of google.protobuf.Struct");
      // A map entry is a message of its own: key 1, value 2, both always written.
      return [
        `for (const key of Object.keys(${value})) { const entry = w.fork(${field.number}); `,
        scalarWrite(field, ScalarType.STRING, "key", runtime, 1),
        " ",
        messageWrite(2, [`${value}[key] as `, f.importShape(field.message)], field.message, names),
        " w.join(entry); }",
      ];
    }
    case "message": {
      const { condition, value: message } = whenSet(field);
      const written = holdsJsonObject(field) ? [runtime.structOfJson, "(", message, ")"] : message;
      return [`if (${condition}) { `, messageWrite(field.number, written, field.message, names), " }"];
    }
    case "enum": {
      const { condition, value: number } = whenSet(field);
      return [`if (${condition}) { `, scalarWrite(field, ScalarType.INT32, number, runtime), " }"];
    }
    case "scalar": {
      const { condition, value: scalar } = whenSet(field);
      return [`if (${condition}) { `, scalarWrite(field, field.scalar, scalar, runtime), " }"];
    }
  }
}

/** protobuf-es's `isFieldSet`, and the expression of the value once it is. */
function whenSet(field: DescField): { condition: string; value: string } {
  if (field.oneof) {
    const oneof = `m.${field.oneof.localName}`;
    return { condition: `${oneof}.case === "${field.localName}"`, value: `${oneof}.value` };
  }
  const value = `m.${field.localName}`;
  if (singularPresence(field) === "explicit") return { condition: `${value} !== undefined`, value };
  if (field.fieldKind !== "scalar") throw unsupported(field, "an enum outside a oneof");
  return { condition: implicitSet(field.scalar, value), value };
}

/** Whether an implicit scalar `value` is set: it is not its zero value. */
function implicitSet(scalar: ScalarType, value: string): string {
  switch (scalar) {
    case ScalarType.STRING:
      return `${value} !== ""`;
    case ScalarType.BOOL:
      return `${value} !== false`;
    case ScalarType.DOUBLE:
      // -0 is set: protobuf-es compares with Object.is.
      return `!Object.is(${value}, 0)`;
    default:
      return `${value} !== 0`;
  }
}

function messageWrite(number: number, value: Printable, message: DescMessage, names: WriterNames): Printable {
  return [`const at = w.fork(${number}); ${names.binary(message)}(w, `, value, "); w.join(at);"];
}

function scalarWrite(
  field: DescField,
  scalar: ScalarType,
  value: string,
  runtime: Runtime,
  number = field.number,
): Printable {
  const { wireType, method } = scalarWriting(field, scalar);
  return [`w.tag(${number}, `, runtime.WireType, `.${wireType}); w.${method}(${value});`];
}

function scalarWriting(field: DescField, scalar: ScalarType): ScalarWriting {
  switch (scalar) {
    case ScalarType.STRING:
      return { wireType: "LengthDelimited", method: "string" };
    case ScalarType.BOOL:
      return { wireType: "Varint", method: "bool" };
    case ScalarType.DOUBLE:
      return { wireType: "Bit64", method: "double" };
    case ScalarType.UINT32:
      return { wireType: "Varint", method: "uint32" };
    case ScalarType.INT32:
      return { wireType: "Varint", method: "int32" };
    default:
      throw unsupported(field, `scalar type ${ScalarType[scalar]}`);
  }
}
